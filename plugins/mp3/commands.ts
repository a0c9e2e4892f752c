import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { MediaTooLargeError, type CommandContext, type IncomingMedia, type MessageContext, type OutgoingMedia, type PluginHost, type WorkFolder } from '../../core/index.js';
import { MediaRefused, type EgressPolicy } from '../../core/media.js';
import { ffmpegBinary } from '../../core/builtin.js';
import { probeMedia, toMp3, toMp4, UnreadableMedia } from './ffmpeg.js';
import { extensionFor, publish, safeName, saveIncoming } from './files.js';
import type { Mp3TestHooks } from './index.js';
import { JobLimiter } from './jobs.js';
import { envSwitches, MB, type Mp3Options } from './options.js';
import { jobPacing, StatusMessage } from './progress.js';
import { ProcessFailed } from './run-process.js';
import { checkLink, isPrivateAddress, looksLikeLink, parseLink, UrlRefused } from './url-guard.js';
import { DownloadFailed, downloadMedia, FORMATS, inspectLink, type Downloader } from './ytdlp.js';

/*
 * What the `.mp3` and `.dl` commands do: jobs, ffmpeg, yt-dlp, the download guard. index.ts loads this module with the
 * first of them, not at start.
 */

type Ctx = MessageContext<Mp3Options>;
type Host = PluginHost<Mp3Options>;

/** Work refused for a reason the user should hear (too long, too big, no sound). */
class JobRefused extends Error {}

const IMAGE_EXT = new Set(['jpg', 'jpeg', 'png', 'webp', 'gif']);

/** `10800` → `3 h 0 min`; `65` → `1 min 5 s`. */
function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  if (s >= 60) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  return `${s} s`;
}

const mb = (bytes: number) => `${(bytes / MB).toFixed(bytes < 10 * MB ? 1 : 0)} MB`;

function checkDuration(seconds: number | undefined, opts: Mp3Options, what: string): void {
  if (seconds !== undefined && seconds > opts.maxDurationMinutes * 60) {
    throw new JobRefused(`${what} is ${formatDuration(seconds)} long; I only handle up to ${formatDuration(opts.maxDurationMinutes * 60)}.`);
  }
}

function checkDownloadSize(bytes: number | undefined, opts: Mp3Options, what: string): void {
  if (bytes !== undefined && bytes > opts.maxDownloadMB * MB) throw new JobRefused(`${what} is ${mb(bytes)}; I only fetch up to ${mb(opts.maxDownloadMB * MB)}.`);
}

async function checkSendSize(file: string, opts: Mp3Options, hint: string): Promise<void> {
  const { size } = await stat(file);
  if (size > opts.maxSendMB * MB) throw new JobRefused(`The result is ${mb(size)}, more than the ${mb(opts.maxSendMB * MB)} WhatsApp accepts.${hint}`);
}

/** The first http(s) link in a text (a replied-to message that carries a link). */
function linkIn(text: string | undefined): string | undefined {
  return text?.match(/https?:\/\/\S+/i)?.[0];
}

/** The sentence for a failed job; unexpected errors are logged and get a generic sentence. */
function explain(err: unknown, ctx: Ctx, opts: Mp3Options): string {
  if (err instanceof JobRefused || err instanceof UrlRefused || err instanceof DownloadFailed || err instanceof MediaRefused) return err.message;
  if (err instanceof UnreadableMedia) return `I can't read that file as audio or video, so there is nothing to convert. (${err.message})`;
  if (err instanceof ProcessFailed) {
    if (err.reason === 'timeout') return `That took longer than ${formatDuration(opts.timeoutSeconds)} and was stopped. Try something shorter.`;
    if (err.reason === 'aborted') return 'The job was stopped because the bot is shutting down. Please try again in a moment.';
    if (err.reason === 'not-found') return `A program I need is missing on this server (${err.message}). The owner can see the details in the start log.`;
  }
  ctx.log.error({ err }, 'mp3 job failed');
  return 'Sorry, that did not work: something went wrong on my side. The owner can find the details in the log.';
}

/** Why link downloads are off right now, or undefined when they work. */
function downloadUnavailable(host: Host): string | undefined {
  const missing = ['ytdlp', 'python', 'ffmpeg'].map((name) => ({ name, status: host.capabilities.status(name) })).filter((c) => !c.status.ok);
  if (!missing.length) return undefined;
  return missing.map((m) => m.status.detail).join('; ');
}

/** The handlers of the `.mp3` and `.dl` commands. */
export interface Mp3Commands {
  mp3(ctx: CommandContext<Mp3Options>): Promise<void>;
  dl(ctx: CommandContext<Mp3Options>): Promise<void>;
}

/**
 * The `.mp3` and `.dl` commands of one running mp3 plugin, with its job counters; `stopping` is aborted at the plugin's
 * stop (made at start, so a stop while the commands load still reaches them): running programs are killed.
 *
 * @example const { mp3 } = mp3Commands(host, {}, new AbortController()); await mp3(ctx);
 */
export function mp3Commands(host: Host, testHooks: Mp3TestHooks, stopping: AbortController): Mp3Commands {
  const jobs = new JobLimiter(stopping);
  const tools = (ctx: Ctx) => {
    const opts = host.options();
    const env = envSwitches(host);
    const ffmpeg = ffmpegBinary(host.settings).path;
    const ytdlp = env.ytdlpPath || 'yt-dlp';
    // Every connection yt-dlp (and its ffmpeg) makes goes through the jail's egress proxy, checked here.
    const egress: EgressPolicy = {
      isBlocked: env.allowPrivateHosts ? () => false : isPrivateAddress,
      resolve: testHooks.resolve,
      allowForTests: testHooks.allowForTests,
    };
    const downloader: Downloader = { jail: host.jail, ytdlp, ffmpeg, egress };
    return { opts, ffmpeg, ytdlp, downloader, allowPrivateHosts: env.allowPrivateHosts };
  };

  /** Runs one job with a slot, a status message, a work folder, and cleanup of everything on failure. */
  async function runJob(
    ctx: Ctx,
    opts: Mp3Options,
    firstStatus: string,
    work: (job: { status: StatusMessage; dir: string; onFailureRemove: string[] }) => Promise<void>,
  ): Promise<void> {
    const slot = jobs.take(ctx.senderId, { perUser: opts.maxJobsPerUser, total: opts.maxJobsTotal });
    if (typeof slot === 'string') {
      await ctx.reply(slot);
      return;
    }
    const onFailureRemove: string[] = [];
    let workDir: WorkFolder | undefined;
    let status: StatusMessage | undefined;
    try {
      status = await StatusMessage.open(ctx, firstStatus, jobPacing(opts));
      workDir = await ctx.host.files.work();
      await work({ status, dir: workDir.dir, onFailureRemove });
    } catch (err) {
      // No leftovers: whatever this job stored goes when it fails.
      await Promise.all(onFailureRemove.map((f) => rm(f, { force: true }).catch(() => undefined)));
      const text = explain(err, ctx, opts);
      ctx.log.info({ reason: text }, 'mp3 job refused or failed');
      if (status) await status.fail(text);
      else await ctx.reply(text);
    } finally {
      await workDir?.remove().catch((err) => ctx.log.warn({ err, dir: workDir?.dir }, 'could not remove a job folder'));
      slot.release();
    }
  }

  /** Publishes a finished file into data/generated/ and sends it; a failed send removes it again. */
  async function deliver(ctx: Ctx, file: string, title: string, ext: string, media: Omit<OutgoingMedia, 'path'>, onFailureRemove: string[]): Promise<void> {
    const final = await publish(ctx.host.files.folder('generated'), file, title, ext);
    onFailureRemove.push(final);
    await ctx.sendMedia({ ...media, path: final, fileName: media.fileName ?? `${safeName(title)}.${ext}` }, { quote: true });
  }

  /** `.mp3` on a replied (or captioned) video, voice note, audio or document. */
  async function mediaToMp3(ctx: Ctx, media: IncomingMedia, title: string): Promise<void> {
    const { opts, ffmpeg } = tools(ctx);
    const prefix = ctx.host.config().prefix;
    if (media.kind === 'image' || media.kind === 'sticker') {
      await ctx.reply(`That is ${media.kind === 'image' ? 'an image' : 'a sticker'}: ${prefix}mp3 needs a video, voice note, audio or a file with sound.`);
      return;
    }
    const ffmpegStatus = ctx.host.capabilities.status('ffmpeg');
    if (!ffmpegStatus.ok) {
      await ctx.reply(`MP3 conversion is unavailable here: ${ffmpegStatus.detail}.`);
      return;
    }
    try {
      checkDownloadSize(media.size, opts, 'That file');
      checkDuration(media.seconds, opts, 'That recording');
    } catch (err) {
      await ctx.reply((err as Error).message);
      return;
    }
    const timeoutMs = opts.timeoutSeconds * 1000;
    await runJob(ctx, opts, 'Converting to MP3…', async ({ status, dir, onFailureRemove }) => {
      let bytes: Buffer;
      try {
        // A media download that never ends must not hold the job slot (and the chat) forever.
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('media download timed out')), timeoutMs)));
        bytes = await Promise.race([media.download({ maxBytes: Math.floor(opts.maxDownloadMB * MB) }), timeout]).finally(() => clearTimeout(timer));
      } catch (err) {
        if (err instanceof MediaTooLargeError) throw new JobRefused(err.message);
        ctx.log.warn({ err }, 'could not fetch the media to convert');
        throw new JobRefused('I could not fetch that media from WhatsApp (it may have expired). Send it again and reply to the new one.');
      }
      checkDownloadSize(bytes.length, opts, 'That file');
      const incoming = await saveIncoming(ctx.host.files.folder('media'), bytes, extensionFor(media.mimetype, media.fileName));
      onFailureRemove.push(incoming);
      const info = await probeMedia(ctx.host.jail, ffmpeg, incoming, Math.min(timeoutMs, 60_000));
      if (!info.hasAudio) throw new JobRefused('That file has no sound, so there is nothing to convert to MP3.');
      checkDuration(info.seconds, opts, 'That recording');
      const out = path.join(dir, 'out.mp3');
      await toMp3(ctx.host.jail, ffmpeg, incoming, out, {
        bitrateKbps: opts.audioBitrateKbps,
        timeoutMs,
        seconds: info.seconds,
        signal: jobs.controller.signal,
        onProgress: (p) => status.progress('Converting to MP3…', p),
      });
      await checkSendSize(out, opts, ' Try a shorter recording.');
      const name = title || (media.fileName ? path.parse(media.fileName).name : '') || 'audio';
      await deliver(ctx, out, name, 'mp3', { kind: 'audio', mimetype: 'audio/mpeg' }, onFailureRemove);
      await status.finish('Converted to MP3 ✓');
    });
  }

  /** `.mp3 <link>` (want audio) and `.dl <link>` (want the video or image). */
  async function fromLink(ctx: Ctx, text: string, want: 'audio' | 'video'): Promise<void> {
    const { opts, ffmpeg, downloader } = tools(ctx);
    const prefix = ctx.host.config().prefix;
    const why = downloadUnavailable(ctx.host);
    if (why) {
      await ctx.reply(`Downloading from links is unavailable here: ${why}.${want === 'audio' ? ` Replying ${prefix}mp3 to a video, voice note or audio still works.` : ''}`);
      return;
    }
    let url: URL;
    try {
      // The first check gives a clear reply early; the egress proxy checks every connection again (redirects, DNS).
      const typed = parseLink(text);
      const testTarget = typed && testHooks.allowForTests?.includes(`${typed.hostname}:${typed.port || (typed.protocol === 'https:' ? 443 : 80)}`);
      url = await checkLink(text, { allowPrivateHosts: tools(ctx).allowPrivateHosts || testTarget, resolve: testHooks.resolve });
    } catch (err) {
      if (!(err instanceof UrlRefused)) throw err;
      ctx.log.info({ reason: err.message }, 'link refused');
      await ctx.reply(err.message);
      return;
    }
    const host = url.hostname;
    const timeoutMs = opts.timeoutSeconds * 1000;
    const signal = jobs.controller.signal;
    await runJob(ctx, opts, `Looking at the ${host} link…`, async ({ status, dir, onFailureRemove }) => {
      const infoFile = path.join(dir, 'info.json');
      const format = want === 'audio' ? FORMATS.audio : FORMATS.video;
      const remote = await inspectLink(downloader, url, { format, infoFile, timeoutMs: Math.min(timeoutMs, 120_000), signal });
      if (remote.isPlaylist) throw new JobRefused('That link is a playlist or an album. Send a link to one video or post.');
      if (remote.isLive) throw new JobRefused('That is a live stream; I can only download finished videos.');
      checkDuration(remote.seconds, opts, 'That video');
      checkDownloadSize(remote.bytes, opts, 'That file');

      await status.stage('Downloading… 0%');
      const file = await downloadMedia(downloader, {
        infoFile,
        dir,
        format,
        maxBytes: opts.maxDownloadMB * MB,
        timeoutMs,
        host,
        signal,
        onProgress: (p) => status.progress('Downloading…', p),
      });
      const ext = path.extname(file).slice(1).toLowerCase();
      if (want === 'video' && IMAGE_EXT.has(ext)) {
        await checkSendSize(file, opts, '');
        await deliver(ctx, file, remote.title, ext === 'jpeg' ? 'jpg' : ext, { kind: 'image', mimetype: `image/${ext === 'jpg' ? 'jpeg' : ext}` }, onFailureRemove);
        await status.finish(`Downloaded ✓ ${remote.title}`);
        return;
      }
      let info;
      try {
        info = await probeMedia(ctx.host.jail, ffmpeg, file, 60_000);
      } catch (err) {
        if (err instanceof UnreadableMedia || err instanceof MediaRefused) throw new JobRefused(`What ${host} gave me is not audio or video I can read.`);
        throw err;
      }
      checkDuration(info.seconds, opts, 'That video');

      const convertTo = async (label: string, run: (out: string) => Promise<void>, out: string) => {
        await status.stage(`${label} 0%`);
        await run(out);
        return out;
      };
      const progress = (label: string) => (p: number) => status.progress(label, p);

      if (want === 'audio' || !info.hasVideo) {
        if (!info.hasAudio) throw new JobRefused(want === 'audio' ? 'That post has no sound to turn into an MP3.' : `What ${host} gave me has neither picture nor sound.`);
        const out =
          ext === 'mp3' && !info.hasVideo
            ? file
            : await convertTo('Converting to MP3…', (o) => toMp3(ctx.host.jail, ffmpeg, file, o, { bitrateKbps: opts.audioBitrateKbps, timeoutMs, seconds: info.seconds, signal, onProgress: progress('Converting to MP3…') }), path.join(dir, 'out.mp3'));
        await checkSendSize(out, opts, ' Try a shorter video.');
        await deliver(ctx, out, remote.title, 'mp3', { kind: 'audio', mimetype: 'audio/mpeg' }, onFailureRemove);
        await status.finish(`Done ✓ ${remote.title}`);
        return;
      }
      const out =
        ext === 'mp4'
          ? file
          : await convertTo('Converting the video…', (o) => toMp4(ctx.host.jail, ffmpeg, file, o, { timeoutMs, seconds: info.seconds, signal, onProgress: progress('Converting the video…') }), path.join(dir, 'out.mp4'));
      await checkSendSize(out, opts, ` Try ${prefix}mp3 with the same link for the sound only.`);
      await deliver(ctx, out, remote.title, 'mp4', { kind: 'video', mimetype: 'video/mp4' }, onFailureRemove);
      await status.finish(`Downloaded ✓ ${remote.title}`);
    });
  }

  function usage(prefix: string): string {
    return [
      `*${prefix}mp3*: turn media into an MP3 audio file.`,
      `• Reply ${prefix}mp3 to a video, voice note, audio or a file with sound (or send a video with the caption ${prefix}mp3).`,
      `• ${prefix}mp3 <link>: the sound of a YouTube, TikTok, Instagram, X, Facebook… video as MP3.`,
      `• ${prefix}dl <link>: download the video or image itself.`,
      `Optional: a name after ${prefix}mp3 on a reply names the file (${prefix}mp3 my song).`,
    ].join('\n');
  }

  /** `.mp3`: a link → its sound; a replied/captioned media → MP3; a reply to a message with a link → its sound. */
  async function mp3(ctx: CommandContext<Mp3Options>): Promise<void> {
    const first = ctx.args.split(/\s+/)[0] ?? '';
    const media = ctx.message.media ?? ctx.message.quoted?.media;
    const quotedLink = linkIn(ctx.message.quoted?.text);
    if (first && (looksLikeLink(first) || !media)) return fromLink(ctx, first, 'audio');
    if (!ctx.message.media && (await ctx.replyIfQuotedDeleted())) return;
    if (media) return mediaToMp3(ctx, media, ctx.args);
    if (quotedLink) return fromLink(ctx, quotedLink, 'audio');
    await ctx.reply(usage(ctx.host.config().prefix));
  }

  /** `.dl <link>` (or replied to a message with a link): the video or image itself. */
  async function dl(ctx: CommandContext<Mp3Options>): Promise<void> {
    const prefix = ctx.host.config().prefix;
    const first = ctx.args.split(/\s+/)[0] ?? '';
    const quotedLink = linkIn(ctx.message.quoted?.text);
    if (first) return fromLink(ctx, first, 'video');
    if (quotedLink) return fromLink(ctx, quotedLink, 'video');
    await ctx.reply(`Send ${prefix}dl with a link, e.g. ${prefix}dl https://youtu.be/… (or reply ${prefix}dl to a message with a link).`);
  }

  return { mp3, dl };
}
