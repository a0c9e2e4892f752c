import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes an executable `yt-dlp` look-alike into `dir` for tests without internet. It answers like yt-dlp
 * (`--version`, `-J <url>` with a JSON description, `--load-info-json <file> -o <template>` with `[download] N%`
 * progress lines and a file written from `sample`), and its behaviour is chosen by the link's path:
 * - `/long`: a 3-hour video (duration 10800)
 * - `/huge`: a 10 GB file
 * - `/playlist`: a playlist
 * - `/unsupported`: `ERROR: Unsupported URL`
 * - `/private`: a private video
 * - `/broken`: fails half-way through the download, leaving a `.part` file
 * - `/garbage`: "downloads" a file that is not media
 * - anything else: a 2-second clip (the `sample` file)
 * Every call's arguments are appended to `<dir>/calls.log` (one JSON array a line).
 *
 * @example
 * const bin = await writeFakeYtdlp(dir, samplePath);
 * // env: { YTDLP_PATH: bin, MP3_ALLOW_PRIVATE_HOSTS: 'true' }
 */
export async function writeFakeYtdlp(dir: string, sample: string, options: { version?: string } = {}): Promise<string> {
  const bin = path.join(dir, 'yt-dlp');
  const script = `#!${process.execPath}
const fs = require('node:fs');
const path = require('node:path');
const args = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(path.join(dir, 'calls.log'))}, JSON.stringify(args) + '\\n');
const sample = ${JSON.stringify(sample)};
const fail = (msg) => { process.stderr.write('ERROR: ' + msg + '\\n'); process.exit(1); };
if (args.includes('--version')) { console.log(${JSON.stringify(options.version ?? '2099.01.01-fake')}); process.exit(0); }
const loadAt = args.indexOf('--load-info-json');
if (loadAt === -1) {
  const url = args[args.length - 1];
  const kind = new URL(url).pathname.slice(1);
  if (kind === 'unsupported') fail('Unsupported URL: ' + url);
  if (kind === 'private') fail('[fake] abc123: Private video. Sign in if you have been granted access to this video');
  const info = { id: 'abc123', title: 'Fake clip', webpage_url: url, extractor_key: 'Fake', ext: 'mp4', duration: 2, filesize: fs.statSync(sample).size };
  if (kind === 'long') Object.assign(info, { title: 'Three hours', duration: 10800, filesize: undefined });
  if (kind === 'huge') Object.assign(info, { title: 'Huge', duration: 60, filesize: 10 * 1024 ** 3 });
  if (kind === 'playlist') Object.assign(info, { _type: 'playlist', title: 'A playlist', entries: [] });
  process.stdout.write(JSON.stringify(info));
  process.exit(0);
}
const info = JSON.parse(fs.readFileSync(args[loadAt + 1], 'utf8'));
const template = args[args.indexOf('-o') + 1];
const kind = new URL(info.webpage_url).pathname.slice(1);
const out = template.replace('%(ext)s', 'mp4');
const progress = (p) => console.log('[download] ' + p.toFixed(1).padStart(5) + '% of 1.00MiB at 1.00MiB/s ETA 00:01');
progress(0);
progress(25);
if (kind === 'broken') {
  fs.writeFileSync(out + '.part', Buffer.alloc(1000));
  fail('unable to download video data: HTTP Error 403: Forbidden');
}
if (kind === 'garbage') {
  fs.writeFileSync(out, 'this is not a video at all, just text pretending to be one\\n'.repeat(50));
} else {
  fs.copyFileSync(sample, out);
}
progress(50);
progress(75);
progress(100);
`;
  await writeFile(bin, script);
  await chmod(bin, 0o755);
  return bin;
}

/** The argument lists the fake was called with, in order. */
export async function fakeYtdlpCalls(dir: string): Promise<string[][]> {
  try {
    return (await readFile(path.join(dir, 'calls.log'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as string[]);
  } catch {
    return [];
  }
}
