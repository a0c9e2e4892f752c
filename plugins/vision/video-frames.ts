import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Jail } from '../../core/index.js';
import { MediaRefused } from '../../core/media.js';
import { inputArgs, pinFormat } from '../../core/builtin.js';
import { mediaSeconds } from '../../core/builtin.js';
import { ImageRefused } from './prepare-image.js';

/** Longest side of a frame taken from a video (the vision endpoints scale larger pictures down anyway). */
const FRAME_SIDE = 768;

/**
 * A few still frames of a video, evenly spread over its length (the first at the start), as JPEGs, made by ffmpeg in
 * the core jail (it sees only this video; the container is pinned from the bytes). The sound is not used. Throws
 * ImageRefused with a sentence for the user when the bytes are no video ffmpeg can read.
 *
 * @example
 * const frames = await videoFrames(host.jail, ffmpeg, bytes, { count: 4, seconds: 12 }); // 4 JPEGs at 0, 3, 6, 9 s
 */
export async function videoFrames(jail: Jail, ffmpeg: string, bytes: Buffer, options: { count: number; seconds?: number; timeoutMs?: number }): Promise<Buffer[]> {
  let format;
  try {
    format = await pinFormat(bytes, 'sound');
  } catch (err) {
    if (err instanceof MediaRefused) throw new ImageRefused(err.message);
    throw err;
  }
  const timeoutMs = options.timeoutMs ?? 60_000;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'vision-video-'));
  try {
    let seconds = options.seconds;
    if (!seconds) {
      const file = path.join(dir, 'in.video');
      await writeFile(file, bytes);
      seconds = await mediaSeconds(jail, ffmpeg, file, format, timeoutMs);
      await rm(file, { force: true });
    }
    const count = Math.max(1, Math.floor(options.count));
    // One frame every length/count seconds: count frames from the start to just before the end. A length that is not
    // known gives one frame a second (still at most count).
    const rate = seconds && seconds > 0 ? `${count}/${Math.max(seconds, 0.1).toFixed(3)}` : '1';
    const scale = `scale='min(${FRAME_SIDE},iw)':'min(${FRAME_SIDE},ih)':force_original_aspect_ratio=decrease`;
    const limit = Math.ceil(timeoutMs / 1000);
    const result = await jail.run({
      kind: 'media',
      program: ffmpeg,
      args: ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', ...inputArgs(format), '-i', 'in/video', '-an', '-vf', `fps=${rate},${scale}`, '-frames:v', String(count), '-q:v', '4', 'out/frame-%02d.jpg'],
      inputs: { video: bytes },
      outputTo: dir,
      limits: { wallSeconds: limit, cpuSeconds: limit, memoryMb: 768, maxProcesses: 64, maxOutputBytes: 256 * 1024, diskBytes: 64 * 1024 * 1024 },
    });
    const names = (await readdir(dir)).filter((name) => /^frame-\d+\.jpg$/.test(name)).sort();
    if (result.exitCode !== 0 || result.stopped || !names.length) throw new ImageRefused('I could not look at that video: it seems damaged or in a format I cannot read. Please send it again as a normal video.');
    return Promise.all(names.slice(0, count).map((name) => readFile(path.join(dir, name))));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
