import { readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Jail } from '../../core/index.js';
import type { EgressPolicy } from '../../core/media.js';
import { ProcessFailed, runInJail } from './run-process.js';

/**
 * How yt-dlp runs: in the core jail, whose only way out is the egress proxy that checks every destination
 * (redirects and DNS answers included) against `egress`; ffmpeg for merging is shown inside the jail too.
 */
export interface Downloader {
  jail: Jail;
  ytdlp: string;
  ffmpeg: string;
  egress: EgressPolicy;
}

/** What yt-dlp found behind a link, before downloading. */
export interface RemoteMedia {
  title: string;
  /** Seconds, when the site says. */
  seconds?: number;
  /** Bytes of the chosen format(s), when the site says (exact or approximate). */
  bytes?: number;
  isLive: boolean;
  isPlaylist: boolean;
  /** yt-dlp's name for the site (`Youtube`, `TikTok`, `generic`). */
  site: string;
}

/** A download that failed; the message is for the user. */
export class DownloadFailed extends Error {}

/** Format choices: the smallest sensible request for each use. */
export const FORMATS = {
  /** Audio only when the site offers it (far smaller), else the best single file. */
  audio: 'ba/b',
  /** One MP4 file when offered (no merge needed), else merge video and audio, else anything. */
  video: 'b[ext=mp4]/bv*[ext=mp4]+ba[ext=m4a]/bv*+ba/b',
} as const;

/** Arguments every call gets: no user config, no playlists, no cache, and file times set to now (the retention
 * sweeper judges age by mtime; yt-dlp would otherwise copy the upload date onto the file). */
function commonArgs(d: Downloader): string[] {
  return ['--ignore-config', '--no-playlist', '--no-cache-dir', '--no-mtime', '--no-color', '--socket-timeout', '30', '--proxy', '@EGRESS_PROXY@', '--ffmpeg-location', d.jail.pathInside(d.ffmpeg)];
}

function runYtdlp(d: Downloader, args: string[], options: Omit<Parameters<typeof runInJail>[3], 'network' | 'egress' | 'tools'>) {
  return runInJail(d.jail, d.ytdlp, [...commonArgs(d), ...args], { ...options, network: 'egress', egress: d.egress, tools: [d.ffmpeg] });
}

/** Turns yt-dlp's error output into a sentence for the user. */
export function explainFailure(output: string, host: string): string {
  const error = output.split('\n').reverse().find((l) => /ERROR:/.test(l))?.replace(/^.*?ERROR:\s*/, '').trim() ?? '';
  if (/Unsupported URL/i.test(output)) return `I can't download from ${host}: the downloader does not support that site or page. Send a link to a single video or post.`;
  // Order matters: "webpage" contains "age", so not-found and network errors are recognised before login walls.
  if (/HTTP Error 404|HTTP Error 410|\bnot found\b|does not exist|has been removed|is unavailable|video unavailable/i.test(error)) return `That ${host} link points to nothing I can download (it may have been removed).`;
  if (/Unable to download webpage|timed out|Connection refused|Name or service not known|getaddrinfo|Temporary failure|Network is unreachable/i.test(error)) return `I couldn't reach ${host}. Try again later.`;
  if (/\bprivate\b|sign in|log ?in\b|cookies|age[- ]restricted|confirm your age|members[- ]only|requires authentication/i.test(error)) return `That ${host} post is private or needs a login, so I can't download it.`;
  if (/not available in your country|geo[- ]?restrict/i.test(error)) return `That ${host} post is not available from this server's country.`;
  if (/No video formats|Requested format is not available|no suitable formats/i.test(error)) return `I found no media to download at that ${host} link.`;
  return `The download from ${host} failed${error ? `: ${error.slice(0, 200)}` : '.'}`;
}

function numberOr(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * Asks yt-dlp what is behind a link (`-J`, nothing downloaded) and keeps its JSON in `infoFile`, so the download
 * step (`--load-info-json`) does not extract the page a second time.
 *
 * @example
 * const media = await inspectLink(downloader, url, { format: FORMATS.audio, infoFile, timeoutMs: 60_000 });
 * if ((media.seconds ?? 0) > 3600) refuse();
 */
export async function inspectLink(
  downloader: Downloader,
  url: URL,
  options: { format: string; infoFile: string; timeoutMs: number; signal?: AbortSignal },
): Promise<RemoteMedia> {
  let stdout: string;
  try {
    ({ stdout } = await runYtdlp(downloader, ['-J', '-f', options.format, '--', url.href], {
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      maxStdout: 30_000_000,
    }));
  } catch (err) {
    if (err instanceof ProcessFailed && err.reason === 'exit') throw new DownloadFailed(explainFailure(`${err.stderr}\n${err.stdout}`, url.hostname));
    throw err;
  }
  let info: Record<string, any>;
  try {
    info = JSON.parse(stdout);
  } catch {
    throw new DownloadFailed(`The downloader gave an answer I can't read for ${url.hostname}.`);
  }
  await writeFile(options.infoFile, stdout);
  const formats: Array<Record<string, unknown>> = Array.isArray(info.requested_formats) ? info.requested_formats : [info];
  const sizes = formats.map((f) => numberOr(f.filesize) ?? numberOr(f.filesize_approx));
  return {
    title: String(info.title ?? info.id ?? 'download').slice(0, 200),
    seconds: numberOr(info.duration),
    bytes: sizes.every((s) => s !== undefined) ? sizes.reduce((a, b) => a! + b!, 0) : undefined,
    isLive: info.is_live === true || info.live_status === 'is_live' || info.live_status === 'is_upcoming',
    isPlaylist: info._type === 'playlist' || info._type === 'multi_video',
    site: String(info.extractor_key ?? info.extractor ?? 'unknown'),
  };
}

/** Files yt-dlp leaves while working; never the result. */
const SCRATCH = /\.(part|ytdl|temp|info\.json)$|^info\.json$|\.part-Frag\d+/;

/**
 * Downloads what `inspectLink` found into `dir`, reporting the percentage, and returns the file's path.
 *
 * @example
 * const file = await downloadMedia(downloader, { infoFile, dir, format: FORMATS.audio, maxBytes, timeoutMs, host: 'youtu.be', onProgress: (p) => status(p) });
 */
export async function downloadMedia(
  downloader: Downloader,
  options: { infoFile: string; dir: string; format: string; maxBytes: number; timeoutMs: number; host: string; onProgress?: (percent: number) => void; signal?: AbortSignal },
): Promise<string> {
  let stdout: string;
  try {
    ({ stdout } = await runYtdlp(
      downloader,
      ['--load-info-json', 'in/info.json', '-f', options.format, '--merge-output-format', 'mp4', '--max-filesize', String(options.maxBytes), '--newline', '-o', 'out/media.%(ext)s'],
      {
        inputs: { 'info.json': options.infoFile },
        outputTo: options.dir,
        // Video and audio parts plus the merged file.
        diskBytes: options.maxBytes * 3 + 16 * 1024 * 1024,
        timeoutMs: options.timeoutMs,
        signal: options.signal,
        onLine: (line) => {
          const m = /^\[download\]\s+(\d+(?:\.\d+)?)%/.exec(line.trim());
          if (m) options.onProgress?.(Number(m[1]));
        },
      },
    ));
  } catch (err) {
    if (err instanceof ProcessFailed && err.reason === 'exit') throw new DownloadFailed(explainFailure(`${err.stderr}\n${err.stdout}`, options.host));
    throw err;
  }
  if (/larger than max-filesize/i.test(stdout)) {
    throw new DownloadFailed(`That file is larger than the ${Math.round(options.maxBytes / 1024 / 1024)} MB I may download.`);
  }
  const names = (await readdir(options.dir)).filter((n) => !SCRATCH.test(n));
  const files = await Promise.all(names.map(async (n) => ({ file: path.join(options.dir, n), info: await stat(path.join(options.dir, n)) })));
  const result = files.filter((f) => f.info.isFile() && f.info.size > 0).sort((a, b) => b.info.size - a.info.size)[0];
  if (!result) throw new DownloadFailed(`The downloader finished but produced no file for that ${options.host} link.`);
  return result.file;
}
