import { createRequire } from 'node:module';
import { MediaRefused } from '../../api/errors.js';

const require = createRequire(import.meta.url);
/** image-size (~26 modules) loads with the first picture checked, not with the plugins that import this at start. */
let imageSize: typeof import('image-size').imageSize | undefined;

/** Default pixel budget for one image (40 megapixels: a 48 MP phone photo is scaled by the phone before sending). */
export const DEFAULT_MAX_IMAGE_PIXELS = 40_000_000;

/**
 * Reads an image's declared width and height from its header (no pixel is decoded) and refuses it when it declares
 * more pixels than the budget: a few KB of PNG can declare 16000×16000 and make a decoder allocate a gigabyte.
 * A header that cannot be read is refused too, since then nothing bounds the decode.
 *
 * @example
 * assertPixelBudget(pngBytes, 40_000_000); // { width: 800, height: 600 }
 */
export function assertPixelBudget(bytes: Uint8Array, maxPixels: number): { width: number; height: number } {
  let size: { width?: number; height?: number };
  try {
    imageSize ??= (require('image-size') as typeof import('image-size')).imageSize;
    size = imageSize(bytes);
  } catch {
    throw new MediaRefused('I could not read the size of that picture from its header, so I did not open it. Please send it as a normal photo.');
  }
  const width = size.width ?? 0;
  const height = size.height ?? 0;
  if (!width || !height) throw new MediaRefused('I could not read the size of that picture from its header, so I did not open it. Please send it as a normal photo.');
  if (width * height > maxPixels) {
    const mp = (n: number) => `${(n / 1_000_000).toFixed(n >= 10_000_000 ? 0 : 1)} megapixels`;
    throw new MediaRefused(`That picture is ${width}×${height} pixels (${mp(width * height)}), more than the ${mp(maxPixels)} I open. Please send a smaller picture.`);
  }
  return { width, height };
}
