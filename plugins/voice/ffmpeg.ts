import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Jail } from '../../core/index.js';
import { inputArgs, type PinnedFormat } from '../../core/builtin.js';

/** Thrown when ffmpeg cannot read the input (damaged or not audio). */
export class AudioConversionError extends Error {}

/** Opus bitrate used when a file must shrink: speech stays clear and an hour is about 7 MB. */
export const SPEECH_BITRATE = 16_000;

/**
 * Runs ffmpeg in the core jail: it sees only the note (`in/input`) and its own `out/`, no network, no other chat's
 * archive, so a note that is really a playlist of `file://` paths finds nothing to read.
 */
async function run(jail: Jail, binary: string, input: Buffer, args: string[], outDir: string, timeoutMs: number): Promise<void> {
  const result = await jail.run({
    kind: 'media',
    program: binary,
    args: ['-hide_banner', '-loglevel', 'error', '-nostdin', ...args],
    inputs: { input },
    outputTo: outDir,
    limits: { wallSeconds: Math.ceil(timeoutMs / 1000), cpuSeconds: Math.ceil(timeoutMs / 1000), memoryMb: 768, maxProcesses: 64, maxOutputBytes: 1024 * 1024, diskBytes: 512 * 1024 * 1024 },
  });
  if (result.exitCode !== 0 || result.stopped) {
    const why = result.stopped ? `stopped (${result.stopped} limit)` : result.stderr.trim().split('\n').slice(-1)[0]?.slice(0, 200);
    throw new AudioConversionError(why || 'ffmpeg failed');
  }
}

/**
 * Converts audio of a pinned container (core/media) into mono Ogg/Opus speech, in one file or, with `segmentSeconds`, in pieces
 * of at most that length (for files over the provider's size limit). Works in a private temp folder.
 *
 * @example
 * const [ogg] = await toOpusSpeech(host.jail, '/usr/bin/ffmpeg', m4aBytes, { format: await pinFormat(m4aBytes, 'sound') });
 * const parts = await toOpusSpeech(host.jail, '/usr/bin/ffmpeg', hugeBytes, { format, segmentSeconds: 600 });
 */
export async function toOpusSpeech(jail: Jail, binary: string, input: Buffer, options: { format: PinnedFormat; segmentSeconds?: number; timeoutMs?: number }): Promise<Buffer[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'voice-ffmpeg-'));
  try {
    const encode = [...inputArgs(options.format), '-i', 'in/input', '-vn', '-map', '0:a:0', '-ac', '1', '-ar', '16000', '-c:a', 'libopus', '-b:a', String(SPEECH_BITRATE), '-application', 'voip'];
    const timeoutMs = options.timeoutMs ?? 120_000;
    if (options.segmentSeconds) {
      await run(jail, binary, input, [...encode, '-f', 'segment', '-segment_time', String(Math.max(1, Math.floor(options.segmentSeconds))), '-segment_format', 'ogg', '-reset_timestamps', '1', 'out/part-%04d.ogg'], dir, timeoutMs);
    } else {
      await run(jail, binary, input, [...encode, '-f', 'ogg', 'out/part-0000.ogg'], dir, timeoutMs);
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

/**
 * Makes a voice reply in one ffmpeg run: the mono Ogg/Opus note (as `toOpusSpeech`) and, from the same decode, the
 * PCM (signed 16-bit, mono, `PCM_RATE` Hz) its length and waveform are read from: one jailed run per voice reply.
 *
 * @example const { ogg, pcm } = await toVoiceNote(host.jail, '/usr/bin/ffmpeg', wavBytes, { format });
 */
export async function toVoiceNote(jail: Jail, binary: string, input: Buffer, options: { format: PinnedFormat; timeoutMs?: number }): Promise<{ ogg: Buffer; pcm: Buffer }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'voice-note-'));
  try {
    const ogg = ['-map', '0:a:0', '-ac', '1', '-ar', '16000', '-c:a', 'libopus', '-b:a', String(SPEECH_BITRATE), '-application', 'voip', '-f', 'ogg', 'out/note.ogg'];
    const pcm = ['-map', '0:a:0', '-ac', '1', '-ar', String(PCM_RATE), '-f', 's16le', 'out/pcm.raw'];
    await run(jail, binary, input, [...inputArgs(options.format), '-i', 'in/input', '-vn', ...ogg, ...pcm], dir, options.timeoutMs ?? 120_000);
    const [note, samples] = await Promise.all([readFile(path.join(dir, 'note.ogg')), readFile(path.join(dir, 'pcm.raw'))]);
    if (!note.length) throw new AudioConversionError('ffmpeg produced no audio');
    return { ogg: note, pcm: samples };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Samples a second of the PCM `toVoiceNote` gives (enough for a length and the 64 bars of a waveform). */
export const PCM_RATE = 8000;
