import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { inputArgs, type PinnedFormat } from '../../core/media/index.js';

/** Thrown when ffmpeg cannot read the input (damaged or not audio). */
export class AudioConversionError extends Error {}

/** Opus bitrate used when a file must shrink: speech stays clear and an hour is about 7 MB. */
export const SPEECH_BITRATE = 16_000;

function run(binary: string, args: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(binary, ['-hide_banner', '-loglevel', 'error', '-nostdin', ...args], { timeout: timeoutMs, maxBuffer: 1024 * 1024 }, (err, _out, stderr) => {
      if (err) reject(new AudioConversionError(String(stderr || err.message).trim().split('\n').slice(-1)[0]?.slice(0, 200) || 'ffmpeg failed'));
      else resolve();
    });
  });
}

/**
 * Converts audio of a pinned container (core/media) into mono Ogg/Opus speech, in one file or, with `segmentSeconds`, in pieces
 * of at most that length (for files over the provider's size limit). Works in a private temp folder.
 *
 * @example
 * const [ogg] = await toOpusSpeech('/usr/bin/ffmpeg', m4aBytes, { format: await pinFormat(m4aBytes, 'sound') });
 * const parts = await toOpusSpeech('/usr/bin/ffmpeg', hugeBytes, { format, segmentSeconds: 600 });
 */
export async function toOpusSpeech(binary: string, input: Buffer, options: { format: PinnedFormat; segmentSeconds?: number; timeoutMs?: number }): Promise<Buffer[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'voice-ffmpeg-'));
  try {
    const source = path.join(dir, 'input');
    await writeFile(source, input);
    const encode = [...inputArgs(options.format), '-i', source, '-vn', '-map', '0:a:0', '-ac', '1', '-ar', '16000', '-c:a', 'libopus', '-b:a', String(SPEECH_BITRATE), '-application', 'voip'];
    const timeoutMs = options.timeoutMs ?? 120_000;
    if (options.segmentSeconds) {
      await run(binary, [...encode, '-f', 'segment', '-segment_time', String(Math.max(1, Math.floor(options.segmentSeconds))), '-segment_format', 'ogg', '-reset_timestamps', '1', path.join(dir, 'part-%04d.ogg')], timeoutMs);
    } else {
      await run(binary, [...encode, '-f', 'ogg', path.join(dir, 'part-0000.ogg')], timeoutMs);
    }
    const parts = (await readdir(dir)).filter((f) => f.startsWith('part-')).sort();
    const buffers = await Promise.all(parts.map((f) => readFile(path.join(dir, f))));
    const nonEmpty = buffers.filter((b) => b.length > 0);
    if (!nonEmpty.length) throw new AudioConversionError('ffmpeg produced no audio');
    return nonEmpty;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
