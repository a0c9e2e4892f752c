import { appendFile, chmod, readFile, writeFile } from 'node:fs/promises';
import type { Jail } from '../../core/services/jail/jail.js';
import path from 'node:path';

/** The subtitles the fake writes for a transcript (automatic captions repeat each line as it scrolls). */
export const FAKE_SUBTITLES = [
  'WEBVTT',
  'Kind: captions',
  'Language: en',
  '',
  '00:00:00.000 --> 00:00:01.500',
  'Zebras sleep <c>standing</c> up',
  '',
  '00:00:01.500 --> 00:00:03.000',
  'Zebras sleep standing up',
  'and their stripes &amp; patterns are unique.',
  '',
].join('\n');

/** The transcript the bot makes of FAKE_SUBTITLES. */
export const FAKE_TRANSCRIPT = 'Zebras sleep standing up\nand their stripes & patterns are unique.';

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
 * With `--skip-download` (a transcript) it writes `<-o>.info.json` (title "Fake clip about zebras") and `<-o>.en.vtt`
 * (FAKE_SUBTITLES), but no subtitles for `/nosubs`; `/private` fails as a private video.
 * Every call's arguments are appended to `<dir>/calls.log` (one JSON array a line).
 *
 * @example
 * const bin = await writeFakeYtdlp(dir, samplePath);
 * // env: { YTDLP_PATH: bin, EGRESS_ALLOW_PRIVATE_HOSTS: 'true' }
 */
export async function writeFakeYtdlp(dir: string, sample: string, options: { version?: string } = {}): Promise<string> {
  const bin = path.join(dir, 'yt-dlp');
  // Python (under /usr, so it also runs inside the core jail) with the sample embedded: inside the jail no host path
  // is visible. Calls made in the jail are recorded by recordFakeYtdlpCalls from the host side instead. A shell
  // script hands it to python on stdin, answering `--version` itself: every bot start asks it (YTDLP_PATH), and a
  // python start costs far more CPU than the answer.
  const sampleBytes = await readFile(sample).catch(() => Buffer.alloc(0));
  const callsLog = path.join(dir, 'calls.log');
  const version = options.version ?? '2099.01.01-fake';
  if (/'/.test(callsLog + version)) throw new Error(`the fake yt-dlp cannot quote ${callsLog} or ${version} for the shell`);
  const script = `#!/bin/sh
if [ "$#" -eq 1 ] && [ "$1" = --version ]; then
  echo '["--version"]' 2>/dev/null >>'${callsLog}'
  echo '${version}'
  exit 0
fi
exec /usr/bin/python3 - "$@" <<'FAKE_YTDLP_PYTHON'
import base64, json, os, sys
from urllib.parse import urlparse
args = sys.argv[1:]
try:
    with open(${JSON.stringify(callsLog)}, 'a') as log:
        log.write(json.dumps(args) + '\\n')
except OSError:
    pass
sample = base64.b64decode(${JSON.stringify(sampleBytes.toString('base64'))})
def fail(msg):
    sys.stderr.write('ERROR: ' + msg + '\\n')
    sys.exit(1)
if '--version' in args:
    print(${JSON.stringify(version)})
    sys.exit(0)
if '--skip-download' in args:
    # A transcript: the info JSON and the subtitles written beside the -o template, nothing downloaded.
    url = args[-1]
    kind = urlparse(url).path[1:]
    if kind == 'private':
        fail('[fake] abc123: Private video. Sign in if you have been granted access to this video')
    template = args[args.index('-o') + 1]
    with open(template + '.info.json', 'w') as f:
        json.dump({'id': 'abc123', 'title': 'Fake clip about zebras', 'webpage_url': url, 'extractor_key': 'Fake', 'duration': 2}, f)
    if kind != 'nosubs':
        with open(template + '.en.vtt', 'w') as f:
            f.write(${JSON.stringify(FAKE_SUBTITLES)})
    sys.exit(0)
if '--load-info-json' not in args:
    url = args[-1]
    kind = urlparse(url).path[1:]
    if kind == 'unsupported':
        fail('Unsupported URL: ' + url)
    if kind == 'private':
        fail('[fake] abc123: Private video. Sign in if you have been granted access to this video')
    info = {'id': 'abc123', 'title': 'Fake clip', 'webpage_url': url, 'extractor_key': 'Fake', 'ext': 'mp4', 'duration': 2, 'filesize': len(sample)}
    if kind == 'long':
        info.update({'title': 'Three hours', 'duration': 10800}); info.pop('filesize')
    if kind == 'huge':
        info.update({'title': 'Huge', 'duration': 60, 'filesize': 10 * 1024 ** 3})
    if kind == 'playlist':
        info.update({'_type': 'playlist', 'title': 'A playlist', 'entries': []})
    sys.stdout.write(json.dumps(info))
    sys.exit(0)
with open(args[args.index('--load-info-json') + 1]) as f:
    info = json.load(f)
template = args[args.index('-o') + 1]
kind = urlparse(info['webpage_url']).path[1:]
out = template.replace('%(ext)s', 'mp4')
def progress(p):
    print('[download] %5.1f%% of 1.00MiB at 1.00MiB/s ETA 00:01' % p, flush=True)
progress(0)
progress(25)
if kind == 'broken':
    with open(out + '.part', 'wb') as f:
        f.write(bytes(1000))
    fail('unable to download video data: HTTP Error 403: Forbidden')
with open(out, 'wb') as f:
    f.write(b'this is not a video at all, just text pretending to be one\\n' * 50 if kind == 'garbage' else sample)
progress(50)
progress(75)
progress(100)
FAKE_YTDLP_PYTHON
`;
  await writeFile(bin, script);
  await chmod(bin, 0o755);
  return bin;
}

/**
 * Records, from the host side, the arguments of every run of the fake in `jail` into `<dir>/calls.log` (the fake
 * itself cannot write there from inside the jail), so fakeYtdlpCalls sees them.
 *
 * @example recordFakeYtdlpCalls(t.app.bot.jail, fakeDir);
 */
export function recordFakeYtdlpCalls(jail: Jail, dir: string): void {
  const run = jail.run.bind(jail);
  jail.run = async (job) => {
    if (path.basename(job.program) === 'yt-dlp') await appendFile(path.join(dir, 'calls.log'), `${JSON.stringify(job.args.filter((a, i, all) => a !== '--proxy' && all[i - 1] !== '--proxy'))}\n`);
    return run(job);
  };
}

/** The argument lists the fake was called with, in order. */
export async function fakeYtdlpCalls(dir: string): Promise<string[][]> {
  try {
    return (await readFile(path.join(dir, 'calls.log'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as string[]);
  } catch {
    return [];
  }
}
