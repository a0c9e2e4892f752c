import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Jail } from '../../core/index.js';
import { assertPixelBudget, DEFAULT_MAX_IMAGE_PIXELS } from '../../core/media.js';
import { inputArgs, pinFormat, type PinnedFormat } from '../../core/builtin.js';

/** WhatsApp's sticker limits: 512 px on the longer side; 100 KB still, 500 KB animated (from at most 6 s of video). */
export const STICKER_SIDE = 512;
export const STILL_MAX_BYTES = 100 * 1024;
export const ANIMATED_MAX_BYTES = 500 * 1024;
export const ANIMATED_MAX_SECONDS = 6;

/** A sticker could not be made; the message is for the user. */
export class StickerRefused extends Error {}

const SCALE = `scale=${STICKER_SIDE}:${STICKER_SIDE}:force_original_aspect_ratio=decrease`;

/**
 * Makes a WhatsApp sticker (WebP, 512 px on the longer side) with ffmpeg in the core jail, which sees only this input.
 * A still image is encoded at falling quality until it is under 100 KB; a video gives an animated sticker of its first
 * 6 seconds at falling frame rate and quality until it is under 500 KB. The input's format is pinned from its bytes.
 *
 * @example
 * const webp = await makeSticker(host.jail, ffmpeg, bytes, 'image');
 */
export async function makeSticker(jail: Jail, ffmpeg: string, bytes: Buffer, kind: 'image' | 'video', timeoutMs = 60_000): Promise<{ webp: Buffer; animated: boolean }> {
  let format: PinnedFormat;
  if (kind === 'image') {
    assertPixelBudget(bytes, DEFAULT_MAX_IMAGE_PIXELS);
    format = await pinFormat(bytes, 'image');
  } else format = await pinFormat(bytes, 'sound');
  const attempts =
    kind === 'image'
      ? [95, 80, 60, 40, 20].map((q) => ['-frames:v', '1', '-vf', `${SCALE}`, '-c:v', 'libwebp', '-quality', String(q), '-compression_level', '6'])
      : [
          [15, 50],
          [10, 35],
          [8, 20],
        ].map(([fps, q]) => ['-t', String(ANIMATED_MAX_SECONDS), '-an', '-vf', `fps=${fps},${SCALE}`, '-c:v', 'libwebp_anim', '-loop', '0', '-quality', String(q), '-compression_level', '6']);
  const cap = kind === 'image' ? STILL_MAX_BYTES : ANIMATED_MAX_BYTES;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sticker-'));
  try {
    for (const encode of attempts) {
      const result = await jail.run({
        kind: 'media',
        program: ffmpeg,
        args: ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', ...inputArgs(format), '-i', 'in/media', ...encode, '-f', 'webp', 'out/sticker.webp'],
        inputs: { media: bytes },
        outputTo: dir,
        limits: { wallSeconds: Math.ceil(timeoutMs / 1000), cpuSeconds: Math.ceil(timeoutMs / 1000), memoryMb: 768, maxProcesses: 64, maxOutputBytes: 256 * 1024, diskBytes: 64 * 1024 * 1024 },
      });
      if (result.exitCode !== 0 || result.stopped) throw new StickerRefused('I could not make a sticker of that: it seems damaged or in a format I cannot read.');
      const webp = await readFile(path.join(dir, 'sticker.webp'));
      if (webp.length <= cap) return { webp, animated: kind === 'video' };
    }
    throw new StickerRefused(`I could not make that sticker small enough (WhatsApp takes at most ${cap / 1024} KB). Try a simpler picture or a shorter clip.`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
