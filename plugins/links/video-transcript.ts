import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Jail } from '../../core/index.js';
import type { EgressPolicy } from '../../core/media.js';

/** Sites whose links are videos: read through their subtitles, never downloaded. */
const VIDEO_HOSTS = ['youtube.com', 'youtu.be', 'youtube-nocookie.com', 'vimeo.com', 'dailymotion.com', 'dai.ly'];

/**
 * True for a link to a video page on a site the bot reads through its subtitles (YouTube, Vimeo, Dailymotion).
 *
 * @example
 * isVideoLink(new URL('https://youtu.be/dQw4w9WgXcQ')); // true
 */
export function isVideoLink(url: URL): boolean {
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  return VIDEO_HOSTS.some((site) => host === site || host.endsWith(`.${site}`));
}

/** A video's transcript could not be had; the message is a sentence for the user. */
export class TranscriptUnavailable extends Error {}

/** How yt-dlp runs for a transcript: the jail, the program, where it may connect, and its limits. */
export interface TranscriptRunner {
  jail: Jail;
  ytdlp: string;
  egress: EgressPolicy;
  /** yt-dlp's `--sub-langs` (e.g. `en.*,id.*`). */
  languages: string;
  timeoutSeconds: number;
}

/**
 * A WebVTT file's words as plain text: cue timings, numbers, styling tags and the repeats of automatic captions (which
 * show each line twice as it scrolls) left out.
 *
 * @example
 * vttText('WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nHello <c>there</c>\n'); // 'Hello there'
 */
export function vttText(vtt: string): string {
  const lines: string[] = [];
  let skipping = false;
  for (const raw of vtt.replace(/\r/g, '').split('\n')) {
    const line = raw.trim();
    if (!line) {
      skipping = false;
      continue;
    }
    if (skipping) continue;
    if (/^(WEBVTT|Kind:|Language:)/.test(line)) continue;
    if (/^(NOTE|STYLE|REGION)\b/.test(line)) {
      skipping = true;
      continue;
    }
    if (line.includes('-->') || /^\d+$/.test(line)) continue;
    const words = line
      .replace(/<[^>]*>/g, '')
      .replace(/&amp;/g, '&')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&nbsp;/g, ' ')
      .replace(/&#39;|&apos;/g, "'")
      .replace(/&quot;/g, '"')
      .replace(/\s+/g, ' ')
      .trim();
    if (words && words !== lines.at(-1)) lines.push(words);
  }
  return lines.join('\n');
}

/**
 * A video's title and transcript, from its subtitles (the uploader's, else the automatic ones), fetched by yt-dlp in
 * the jail: nothing but subtitles and the page's description are downloaded, and every connection yt-dlp makes goes
 * through the egress proxy, which checks each destination (redirects and DNS answers included) against `egress`.
 *
 * @example
 * const { title, text } = await videoTranscript(runner, new URL('https://youtu.be/abc'));
 */
export async function videoTranscript(runner: TranscriptRunner, url: URL): Promise<{ title: string; text: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'links-video-'));
  try {
    const result = await runner.jail.run({
      kind: 'media',
      program: runner.ytdlp,
      args: [
        '--ignore-config', '--no-playlist', '--no-cache-dir', '--no-color', '--socket-timeout', '20', '--proxy', '@EGRESS_PROXY@',
        '--skip-download', '--write-subs', '--write-auto-subs', '--sub-langs', runner.languages, '--sub-format', 'vtt/best',
        '--write-info-json', '--no-write-playlist-metafiles', '-o', 'out/video', '--', url.href,
      ],
      network: 'egress',
      egress: runner.egress,
      outputTo: dir,
      limits: { wallSeconds: runner.timeoutSeconds, cpuSeconds: runner.timeoutSeconds * 2, memoryMb: 512, maxProcesses: 64, maxOutputBytes: 2_000_000, diskBytes: 64 * 1024 * 1024 },
    });
    if (result.refused?.length) throw new TranscriptUnavailable(`I did not open ${url.hostname}: it leads to a local or private network address, and I only read public sites.`);
    if (result.setupFailed) throw new TranscriptUnavailable(`I cannot read videos right now: the downloader could not start (${result.setupFailed}).`);
    if (result.stopped === 'time') throw new TranscriptUnavailable(`Reading that ${url.hostname} video took longer than ${runner.timeoutSeconds} s, so I stopped.`);
    if (result.exitCode !== 0) {
      const error = result.stderr.split('\n').reverse().find((l) => /ERROR:/.test(l))?.replace(/^.*?ERROR:\s*/, '').trim();
      throw new TranscriptUnavailable(`I could not read that ${url.hostname} video${error ? `: ${error.slice(0, 160)}` : '.'}`);
    }
    const files = await readdir(dir);
    const info = files.includes('video.info.json') ? (JSON.parse(await readFile(path.join(dir, 'video.info.json'), 'utf8')) as { title?: unknown }) : {};
    const title = typeof info.title === 'string' ? info.title.slice(0, 200) : url.href;
    const subtitles = files.filter((f) => f.endsWith('.vtt')).sort();
    if (!subtitles.length) throw new TranscriptUnavailable(`The video “${title}” has no subtitles or captions I can read, so I cannot tell what is said in it.`);
    const text = vttText(await readFile(path.join(dir, subtitles[0]!), 'utf8'));
    if (!text) throw new TranscriptUnavailable(`The subtitles of the video “${title}” are empty.`);
    return { title, text };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
