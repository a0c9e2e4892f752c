import path from 'node:path';
import type { Jail } from '../../core/index.js';
import { inputArgs, pinFileFormat } from '../../core/builtin.js';
import { ProcessFailed, runInJail } from './run-process.js';

/** What ffmpeg could read from a media file. */
export interface MediaInfo {
  /** Seconds, when the container says. */
  seconds?: number;
  hasAudio: boolean;
  hasVideo: boolean;
  /** The input format ffmpeg recognised (e.g. `mov,mp4,m4a,3gp,3g2,mj2`). */
  format: string;
}

/** A file ffmpeg cannot read as audio or video; the message is for the user. */
export class UnreadableMedia extends Error {}

/** The name a file has inside the jail: `media` plus its extension (some formats are recognised by it). */
function jailName(file: string): string {
  return `media${/^\.[A-Za-z0-9]{1,8}$/.exec(path.extname(file))?.[0] ?? ''}`;
}

/** Parses `HH:MM:SS.xx` into seconds. */
function clock(text: string): number | undefined {
  const m = /^(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(text.trim());
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : undefined;
}

/**
 * The input options for a media file: its container is sniffed from its first bytes and pinned (`-f`), so ffmpeg
 * never opens a playlist or concat list that points at other files. Throws MediaRefused (from core/media) for
 * anything off the allow-list.
 */
async function pinnedInput(file: string): Promise<string[]> {
  return [...inputArgs(await pinFileFormat(file, 'sound')), '-i', `in/${jailName(file)}`];
}

/**
 * Reads duration and streams of a media file with `ffmpeg -i` (the bundled ffmpeg has no ffprobe), its format pinned. ffmpeg exits 1
 * here by design (no output named); a file it cannot parse gives no `Input #0` and is reported as UnreadableMedia.
 *
 * @example
 * const info = await probeMedia(host.jail, ffmpeg, 'clip.mp4', 30_000); // { seconds: 5, hasAudio: true, hasVideo: true, ... }
 */
export async function probeMedia(jail: Jail, ffmpeg: string, file: string, timeoutMs: number): Promise<MediaInfo> {
  let stderr: string;
  try {
    ({ stderr } = await runInJail(jail, ffmpeg, ['-hide_banner', '-nostdin', ...(await pinnedInput(file))], { inputs: { [jailName(file)]: file }, timeoutMs, okCodes: [0, 1] }));
  } catch (err) {
    if (err instanceof ProcessFailed && err.reason === 'exit') throw new UnreadableMedia('ffmpeg cannot read this file');
    throw err;
  }
  const input = /Input #0, (.+?), from /.exec(stderr);
  if (!input) throw new UnreadableMedia('ffmpeg cannot read this file');
  const duration = /Duration: (\d+:\d{2}:\d{2}(?:\.\d+)?)/.exec(stderr);
  // Cover art in an MP3/M4A shows up as a video stream of an attached picture: that is not video.
  const videoStreams = [...stderr.matchAll(/Stream #\d+:\d+.*?: Video: .*/g)].filter((m) => !/attached pic/.test(m[0]));
  return {
    seconds: duration ? clock(duration[1]!) : undefined,
    hasAudio: /Stream #\d+:\d+.*?: Audio: /.test(stderr),
    hasVideo: videoStreams.length > 0,
    format: input[1]!,
  };
}

export interface ConvertOptions {
  timeoutMs: number;
  /** Input duration (seconds) to turn ffmpeg's position into a percentage. */
  seconds?: number;
  onProgress?: (percent: number) => void;
  signal?: AbortSignal;
}

/**
 * Runs ffmpeg in the core jail with `-progress` on stdout and reports the percentage done. It reads only `input`
 * (as `in/media.<ext>`) and writes only `output` (as `out/<name>`): a playlist naming other files finds nothing.
 */
async function convert(jail: Jail, ffmpeg: string, input: string, output: string, args: (outFile: string) => string[], options: ConvertOptions): Promise<void> {
  try {
    await runInJail(jail, ffmpeg, ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-progress', 'pipe:1', '-nostats', ...(await pinnedInput(input)), ...args(`out/${path.basename(output)}`)], {
      inputs: { [jailName(input)]: input },
      outputTo: path.dirname(output),
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      onLine: (line, stream) => {
        if (stream !== 'stdout' || !options.seconds || !options.onProgress) return;
        const m = /^out_time_(?:ms|us)=(\d+)/.exec(line);
        if (m) options.onProgress(Math.min(100, (Number(m[1]) / 1e6 / options.seconds) * 100));
      },
    });
  } catch (err) {
    if (err instanceof ProcessFailed && err.reason === 'exit') {
      const detail = err.stderr.trim().split('\n').pop() ?? '';
      throw new UnreadableMedia(`ffmpeg could not convert this file${detail ? ` (${detail.slice(0, 160)})` : ''}`);
    }
    throw err;
  }
}

/**
 * Converts the audio of a media file in an allowed container (video, voice note, audio, document) to an MP3 file.
 *
 * @example
 * await toMp3(host.jail, ffmpeg, 'clip.mp4', 'clip.mp3', { bitrateKbps: 192, timeoutMs: 600_000, seconds: 5, onProgress: (p) => log(p) });
 */
export function toMp3(jail: Jail, ffmpeg: string, input: string, output: string, options: ConvertOptions & { bitrateKbps: number }): Promise<void> {
  return convert(jail, ffmpeg, input, output, (o) => ['-vn', '-map', '0:a:0', '-c:a', 'libmp3lame', '-b:a', `${options.bitrateKbps}k`, '-f', 'mp3', o], options);
}

/**
 * Re-encodes a video into the MP4 (H.264 + AAC) WhatsApp plays everywhere.
 *
 * @example
 * await toMp4(host.jail, ffmpeg, 'clip.webm', 'clip.mp4', { timeoutMs: 600_000 });
 */
export function toMp4(jail: Jail, ffmpeg: string, input: string, output: string, options: ConvertOptions): Promise<void> {
  return convert(
    jail,
    ffmpeg,
    input,
    output,
    (o) => ['-map', '0:v:0', '-map', '0:a:0?', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '26', '-pix_fmt', 'yuv420p', '-vf', 'scale=trunc(iw/2)*2:trunc(ih/2)*2', '-c:a', 'aac', '-b:a', '128k', '-movflags', '+faststart', '-f', 'mp4', o],
    options,
  );
}
