import { inputArgs, pinFileFormat } from '../../core/media/index.js';
import { ProcessFailed, runProcess } from './run-process.js';

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
  return [...inputArgs(await pinFileFormat(file, 'sound')), '-i', file];
}

/**
 * Reads duration and streams of a media file with `ffmpeg -i` (the bundled ffmpeg has no ffprobe), its format pinned. ffmpeg exits 1
 * here by design (no output named); a file it cannot parse gives no `Input #0` and is reported as UnreadableMedia.
 *
 * @example
 * const info = await probeMedia(ffmpeg, 'clip.mp4', 30_000); // { seconds: 5, hasAudio: true, hasVideo: true, ... }
 */
export async function probeMedia(ffmpeg: string, file: string, timeoutMs: number): Promise<MediaInfo> {
  let stderr: string;
  try {
    ({ stderr } = await runProcess(ffmpeg, ['-hide_banner', '-nostdin', ...(await pinnedInput(file))], { timeoutMs, okCodes: [0, 1] }));
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

/** Runs ffmpeg with `-progress` on stdout and reports the percentage done. */
async function convert(ffmpeg: string, args: string[], options: ConvertOptions): Promise<void> {
  try {
    await runProcess(ffmpeg, ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-progress', 'pipe:1', '-nostats', ...args], {
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
 * await toMp3(ffmpeg, 'clip.mp4', 'clip.mp3', { bitrateKbps: 192, timeoutMs: 600_000, seconds: 5, onProgress: (p) => log(p) });
 */
export async function toMp3(ffmpeg: string, input: string, output: string, options: ConvertOptions & { bitrateKbps: number }): Promise<void> {
  return convert(ffmpeg, [...(await pinnedInput(input)), '-vn', '-map', '0:a:0', '-c:a', 'libmp3lame', '-b:a', `${options.bitrateKbps}k`, '-f', 'mp3', output], options);
}

/**
 * Re-encodes a video into the MP4 (H.264 + AAC) WhatsApp plays everywhere.
 *
 * @example
 * await toMp4(ffmpeg, 'clip.webm', 'clip.mp4', { timeoutMs: 600_000 });
 */
export async function toMp4(ffmpeg: string, input: string, output: string, options: ConvertOptions): Promise<void> {
  return convert(
    ffmpeg,
    [...(await pinnedInput(input)), '-map', '0:v:0', '-map', '0:a:0?', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '26', '-pix_fmt', 'yuv420p', '-vf', 'scale=trunc(iw/2)*2:trunc(ih/2)*2', '-c:a', 'aac', '-b:a', '128k', '-movflags', '+faststart', '-f', 'mp4', output],
    options,
  );
}
