import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Jail } from '../../core/index.js';
import { assertPixelBudget, DEFAULT_MAX_IMAGE_PIXELS, MediaRefused } from '../../core/media.js';
import { inputArgs, pinFormat, type PinnedFormat } from '../../core/builtin.js';

/** The image types `/v1/messages` accepts in a base64 block. */
export type VisionMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

/** An image ready for the messages endpoint. */
export interface PreparedImage {
  mediaType: VisionMediaType;
  data: Buffer;
  /** True when ffmpeg made it smaller or converted it. */
  converted: boolean;
}

/** An image that cannot be sent; `message` is safe to show the user. */
export class ImageRefused extends Error {}

export interface PrepareOptions {
  /** Largest image sent as is (bytes). The endpoint takes 5 MB of base64, i.e. about 3.75 MB of image. */
  maxImageBytes: number;
  /** Longest side after downscaling (the endpoint scales larger images down anyway). */
  maxDimension: number;
  /** Most pixels (width × height, read from the header) an image may declare; more is refused before any decode. */
  maxPixels?: number;
  /** The ffmpeg binary, or undefined when ffmpeg is not available. */
  ffmpeg?: string;
  /** Where ffmpeg runs (the core jail); required with `ffmpeg`. */
  jail?: Jail;
  timeoutMs?: number;
}

/**
 * The real type of an image from its first bytes. The mimetype a chat app reports is often wrong (a sticker said to
 * be PNG, a file named .jpg that is a WebP), and the endpoint rejects a block whose declared type does not match.
 *
 * @example sniffImageType(Buffer.from([0xff, 0xd8, 0xff, 0xe0])) // 'image/jpeg'
 */
export function sniffImageType(bytes: Buffer): VisionMediaType | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 6 && /^GIF8[79]a$/.test(bytes.subarray(0, 6).toString('latin1'))) return 'image/gif';
  if (bytes.length >= 12 && bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return undefined;
}

const mb = (bytes: number) => `${(bytes / 1_000_000).toFixed(1)} MB`;

/** Runs ffmpeg in the core jail (it sees only this image) to make a JPEG no larger than `maxDimension` on its longest side. */
async function toSmallJpeg(jail: Jail, ffmpeg: string, input: Buffer, format: PinnedFormat, maxDimension: number, timeoutMs: number): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'vision-'));
  try {
    const scale = `scale='min(${maxDimension},iw)':'min(${maxDimension},ih)':force_original_aspect_ratio=decrease`;
    const result = await jail.run({
      kind: 'media',
      program: ffmpeg,
      args: ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', ...inputArgs(format), '-i', 'in/image', '-frames:v', '1', '-vf', scale, '-q:v', '4', 'out/small.jpg'],
      inputs: { image: input },
      outputTo: dir,
      limits: { wallSeconds: Math.ceil(timeoutMs / 1000), cpuSeconds: Math.ceil(timeoutMs / 1000), memoryMb: 768, maxProcesses: 64, maxOutputBytes: 256 * 1024, diskBytes: 64 * 1024 * 1024 },
    });
    if (result.exitCode !== 0 || result.stopped) throw new Error(result.stopped ? `ffmpeg stopped (${result.stopped} limit)` : result.stderr.split('\n')[0]);
    return await readFile(path.join(dir, 'small.jpg'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Makes downloaded image bytes fit the messages endpoint. Only PNG, JPEG, GIF and WebP are opened, and only when the
 * size their header declares is within the pixel budget (a small file can declare a huge canvas); anything else is
 * refused before any decoder sees it. One under the byte limit goes as is; a bigger one is converted by ffmpeg,
 * its input format pinned, to a smaller JPEG. Without ffmpeg it is refused with a message for the user.
 *
 * @example
 * const image = await prepareImage(bytes, { maxImageBytes: 3_750_000, maxDimension: 1568, ffmpeg: '/usr/bin/ffmpeg', jail: host.jail });
 */
export async function prepareImage(bytes: Buffer, options: PrepareOptions): Promise<PreparedImage> {
  if (!bytes.length) throw new ImageRefused('That image is empty, so there is nothing for me to look at.');
  const type = sniffImageType(bytes);
  if (!type) throw new ImageRefused('I could not open that image: it is not a picture in a format I open (JPEG, PNG, GIF or WebP). Please send it as a normal photo.');
  let format: PinnedFormat;
  try {
    assertPixelBudget(bytes, options.maxPixels ?? DEFAULT_MAX_IMAGE_PIXELS);
    format = await pinFormat(bytes, 'image');
  } catch (err) {
    if (err instanceof MediaRefused) throw new ImageRefused(err.message);
    throw err;
  }
  if (bytes.length <= options.maxImageBytes) return { mediaType: type, data: bytes, converted: false };
  if (!options.ffmpeg || !options.jail) {
    throw new ImageRefused(`That image is too large for me (${mb(bytes.length)}; I can take up to ${mb(options.maxImageBytes)}) and I cannot shrink images here. Please send a smaller one.`);
  }
  let small: Buffer;
  try {
    small = await toSmallJpeg(options.jail, options.ffmpeg, bytes, format, options.maxDimension, options.timeoutMs ?? 60_000);
  } catch {
    throw new ImageRefused('I could not open that image: it seems damaged or in a format I cannot read. Please send it as a normal photo.');
  }
  if (sniffImageType(small) !== 'image/jpeg') throw new ImageRefused('I could not open that image: it seems damaged or in a format I cannot read.');
  if (small.length > options.maxImageBytes) {
    throw new ImageRefused(`That image is still too large for me after shrinking it (${mb(small.length)}). Please send a smaller one.`);
  }
  return { mediaType: 'image/jpeg', data: small, converted: true };
}
