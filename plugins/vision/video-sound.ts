import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { normalizeBaseUrl, type Jail, type KeyPool } from '../../core/index.js';
import { inputArgs, openaiSdk, type PinnedFormat } from '../../core/builtin.js';

/** Windows of sound taken from a long video: spread over it like the frames (start, …, end). */
export const SOUND_WINDOWS = 4;

/**
 * Which stretches of a video's sound are heard within `budget` seconds: all of it when it fits, else `SOUND_WINDOWS`
 * windows of budget/4 seconds each, evenly spread from the start to the end (as the frames are).
 *
 * @example soundWindows(600, 120) // [[0, 30], [190, 220], [380, 410], [570, 600]]
 */
export function soundWindows(seconds: number | undefined, budget: number): Array<[number, number]> {
  if (!seconds || seconds <= budget) return [[0, budget]];
  const length = budget / SOUND_WINDOWS;
  const step = (seconds - length) / (SOUND_WINDOWS - 1);
  return Array.from({ length: SOUND_WINDOWS }, (_, i) => [Math.round(i * step * 10) / 10, Math.round((i * step + length) * 10) / 10] as [number, number]);
}

/** What a video's sound gave: its words (possibly none spoken), or that it has no sound track. */
export type VideoSound = { words: string; sampled: boolean } | { none: true };

/**
 * The sound track of a video as mono Ogg/Opus speech, only the windows within the budget, made by ffmpeg in the core
 * jail (it sees only this video). Undefined when the video has no sound track.
 */
export async function videoSoundTrack(jail: Jail, ffmpeg: string, bytes: Buffer, format: PinnedFormat, windows: Array<[number, number]>, timeoutMs: number): Promise<Buffer | undefined> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'vision-sound-'));
  try {
    const pick = windows.map(([from, to]) => `between(t,${from},${to})`).join('+');
    const limit = Math.ceil(timeoutMs / 1000);
    const result = await jail.run({
      kind: 'media',
      program: ffmpeg,
      args: ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', ...inputArgs(format), '-i', 'in/video', '-vn', '-map', '0:a:0', '-af', `aselect='${pick}',asetpts=N/SR/TB`, '-ac', '1', '-ar', '16000', '-c:a', 'libopus', '-b:a', '16000', '-application', 'voip', '-f', 'ogg', 'out/sound.ogg'],
      inputs: { video: bytes },
      outputTo: dir,
      limits: { wallSeconds: limit, cpuSeconds: limit, memoryMb: 768, maxProcesses: 64, maxOutputBytes: 256 * 1024, diskBytes: 64 * 1024 * 1024 },
    });
    // ffmpeg says a map "matches no streams" when the video has no sound track.
    if (result.exitCode !== 0 && /matches no streams/i.test(result.stderr)) return undefined;
    if (result.exitCode !== 0 || result.stopped) throw new Error(`ffmpeg could not take the sound out: ${result.stopped ? `stopped (${result.stopped} limit)` : result.stderr.trim().split('\n').slice(-1)[0]?.slice(0, 200)}`);
    return await readFile(path.join(dir, 'sound.ogg'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The audio provider's transcription (`POST <AUDIO_BASE_URL>/v1/audio/transcriptions`), on the core's pool of audio keys. */
export async function transcribeSound(pool: Pick<KeyPool, 'run'>, options: { baseUrl: string; model: string; timeoutMs: number }, ogg: Buffer): Promise<string> {
  const baseURL = normalizeBaseUrl(options.baseUrl).v1;
  return pool.run('transcription', async (key) => {
    const { default: OpenAI, toFile } = await openaiSdk();
    const client = new OpenAI({ apiKey: key, baseURL, maxRetries: 0, timeout: options.timeoutMs });
    const result = await client.audio.transcriptions.create({ file: await toFile(ogg, 'sound.ogg', { type: 'audio/ogg' }), model: options.model, response_format: 'json' });
    const text = (result as { text?: unknown }).text;
    if (typeof text !== 'string') throw new Error('the audio provider answered without a transcript');
    return text.trim();
  });
}
