import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ffmpegBinary } from '../../../core/kernel/capabilities/detect.js';
import { Jail, type JailJob, type JailResult } from '../../../core/services/jail/jail.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeSample } from '../../plugins/mp3/media-samples.js';
import { cleanup, link, setup, type Harness } from './harness.js';

const ALICE = '6281211110000@s.whatsapp.net';
const FFMPEG = ffmpegBinary({ ffmpegPath: '' }).path;
const run = promisify(execFile);

/** The core jail, keeping every job it was given and what came of it. */
class RecordingJail extends Jail {
  readonly jobs: Array<{ job: JailJob; result?: JailResult }> = [];
  override async run(job: JailJob): Promise<JailResult> {
    const entry: { job: JailJob; result?: JailResult } = { job };
    this.jobs.push(entry);
    entry.result = await super.run(job);
    return entry.result;
  }
}

/** An HLS playlist whose only segment is another file on this machine (a crafted "video"). */
const hlsPlaylist = (target: string) => Buffer.from(`#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\nfile://${target}\n#EXT-X-ENDLIST\n`);

/** The preview Baileys put into the video message it built (empty: none). */
function previewOf(h: Harness): Buffer {
  const video = h.sockets.last.sent.at(-1)!.message?.videoMessage;
  expect(video, 'a video message was built').to.not.equal(undefined);
  return Buffer.from(video!.jpegThumbnail ?? new Uint8Array());
}

/**
 * Video previews (DESIGN §9): the first frame is read by ffmpeg in the core jail, never outside it. Baileys' own
 * media builder runs here (the fake socket builds messages with it), so its fallback — running the `ffmpeg` on PATH
 * through a shell — would show as a call of the recording `ffmpeg` these tests put first on PATH.
 */
describe('WhatsApp transport: video previews are made in the jail, or not at all (fake socket, real jail and ffmpeg)', function () {
  this.timeout(60_000);
  let dir: string;
  let video: string;
  let onPathCalls: string;
  let savedPath: string | undefined;

  before(async () => {
    dir = await tempDir('wabot-video-preview-');
    video = await makeSample(dir, 'video', 1);
    // A recording `ffmpeg` first on PATH: what Baileys would run by itself to make a preview.
    const bin = path.join(dir, 'path-bin');
    await mkdir(bin);
    onPathCalls = path.join(dir, 'path-ffmpeg-calls.log');
    await writeFile(path.join(bin, 'ffmpeg'), `#!/bin/sh\necho "$@" >> "${onPathCalls}"\nexit 1\n`);
    await chmod(path.join(bin, 'ffmpeg'), 0o755);
    savedPath = process.env.PATH;
    process.env.PATH = `${bin}:${savedPath ?? ''}`;
  });
  after(async () => {
    process.env.PATH = savedPath;
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(cleanup);

  const ranOnPath = async () => (await stat(onPathCalls).catch(() => undefined)) !== undefined;

  it('a video gets a small JPEG preview of its first frame, made by ffmpeg in the jail seeing only that file, with its container pinned', async () => {
    const jail = new RecordingJail();
    const h = await setup({ transport: { jail, ffmpegPath: FFMPEG } });
    await link(h);
    await h.transport.sendMedia(ALICE, { kind: 'video', path: video, caption: 'the clip' });
    const preview = previewOf(h);
    expect(preview.subarray(0, 3).toString('hex'), 'a JPEG').to.equal('ffd8ff');
    expect(preview.length).to.be.within(100, 20_000);
    expect(jail.jobs).to.have.length(1);
    const { job, result } = jail.jobs[0]!;
    expect(job.kind).to.equal('media');
    expect(Object.keys(job.inputs ?? {})).to.deep.equal(['media']);
    // The demuxer is pinned from the bytes (MP4 → mov); the host path of the video is never on ffmpeg's command line.
    expect(job.args.join(' ')).to.include('-f mov -i in/media');
    expect(job.args.some((a) => a.includes(dir))).to.equal(false);
    expect(job.network ?? 'none').to.equal('none');
    if ((await jail.detect()).bwrap.ok) expect(result?.jailed).to.equal(true);
    expect(await ranOnPath()).to.equal(false);
    expect(h.messages().filter((m) => m.includes('without a preview'))).to.deep.equal([]);
  });

  it('a "video" that is a playlist naming another chat\'s video gets no preview: nothing of the other video leaves, and no ffmpeg runs', async () => {
    const otherChats = path.join(dir, 'other-chat');
    await mkdir(otherChats, { recursive: true });
    const secret = await makeSample(otherChats, 'video', 1);
    const crafted = path.join(dir, 'crafted.mp4');
    await writeFile(crafted, hlsPlaylist(secret));
    // The attack is real: ffmpeg left to guess the format follows the playlist and previews the other chat's video.
    // (The command the bot used to run unjailed seeked to 0 first, which this playlist happens not to survive: luck.)
    const unpinned = await run(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-i', crafted, '-vf', 'scale=32:-1', '-vframes', '1', '-f', 'image2', '-c:v', 'mjpeg', 'pipe:1'], { encoding: 'buffer', maxBuffer: 1024 * 1024 }).catch(() => undefined);
    expect(unpinned?.stdout.length ?? 0, 'ffmpeg without a pinned format follows the playlist').to.be.greaterThan(0);

    const jail = new RecordingJail();
    const h = await setup({ transport: { jail, ffmpegPath: FFMPEG } });
    await link(h);
    await h.transport.sendMedia(ALICE, { kind: 'video', path: crafted });
    expect(previewOf(h).length).to.equal(0);
    expect(jail.jobs).to.deep.equal([]);
    expect(await ranOnPath()).to.equal(false);
    const line = h.logs().find((l) => String(l.msg).startsWith('sending the video without a preview picture'));
    expect(line?.msg).to.include('not in a video format ffmpeg may open');
  });

  it('a video that takes over ffmpeg cannot read the bot\'s files: the jail shows it only its own input', async function () {
    const jail = new RecordingJail();
    if (!(await jail.detect()).bwrap.ok) this.skip();
    // What a decoder exploit would do, played by a stand-in ffmpeg: read a file of the bot and hand it out as the preview.
    const secret = path.join(dir, 'data-secret.jpg');
    await writeFile(secret, Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), Buffer.from('session keys of the bot')]));
    const exploited = path.join(dir, 'exploited-ffmpeg');
    await writeFile(exploited, `#!/bin/sh\nout=""\nfor a in "$@"; do out="$a"; done\ncat "${secret}" > "$out" || exit 1\n`);
    await chmod(exploited, 0o755);
    // Outside the jail the stand-in does leak the file (the test is not vacuous).
    const outside = path.join(dir, 'outside.jpg');
    await run(exploited, ['-i', video, outside]);
    expect(await readFile(outside)).to.deep.equal(await readFile(secret));

    const h = await setup({ transport: { jail, ffmpegPath: exploited } });
    await link(h);
    await h.transport.sendMedia(ALICE, { kind: 'video', path: video });
    expect(previewOf(h).toString()).to.not.include('session keys');
    expect(previewOf(h).length).to.equal(0);
    expect(jail.jobs[0]?.result?.jailed).to.equal(true);
    expect(h.messages().some((m) => m.startsWith('sending the video without a preview picture: ffmpeg made no preview'))).to.equal(true);
    expect(await ranOnPath()).to.equal(false);
  });

  it('without a jail the video goes without a preview, the log says why, and no ffmpeg runs (not even the one on PATH)', async () => {
    const h = await setup({ transport: { ffmpegPath: FFMPEG } });
    await link(h);
    const sent = await h.transport.sendMedia(ALICE, { kind: 'video', path: video, caption: 'still sent' });
    expect(sent.id).to.not.equal('');
    expect(h.sockets.last.sent.at(-1)!.message?.videoMessage?.caption).to.equal('still sent');
    expect(previewOf(h).length).to.equal(0);
    const line = h.logs().find((l) => String(l.msg).startsWith('sending the video without a preview picture'));
    expect(line).to.include({ level: 40, chat: ALICE });
    expect(line!.msg).to.include('no jail to run ffmpeg in');
    expect(await ranOnPath()).to.equal(false);
  });
});
