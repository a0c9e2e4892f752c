import { AllProvidersFailedError, TURN_FAILED, type MessageContext, type PluginHost, type ToolCall } from '../../core/index.js';
import { LinkCache } from './cache.js';
import { linkKey, linksIn, linksOf } from './find-links.js';
import { linkContent, toolResult } from './framing.js';
import type { LinksTestHooks } from './index.js';
import { CHAT_SETTING, type LinksOptions } from './options.js';
import { LinkRefused, readLink, type LinkRead, type LinkReader } from './read-link.js';
import { isVideoLink } from './video-transcript.js';

const DEFAULT_QUESTION = 'Summarise this briefly: what it is and its main points.';

/** The sentence for a link that could not be read (an unexpected error is logged and said plainly). */
function refusalOf(err: unknown, url: URL, ctx: MessageContext<LinksOptions>): string {
  if (err instanceof LinkRefused) return err.message;
  ctx.log.error({ err, host: url.hostname }, 'reading a link failed');
  return `I could not read ${url.hostname}: something went wrong on my side.`;
}

/**
 * The model's turn with the links read: each as quoted content (what it is, where from, never instructions); the
 * links that could not be read are listed as content too (their addresses are the message's words), so the model
 * does not guess. The one place the content reaches `respond`.
 */
async function respondWithLinks(ctx: MessageContext<LinksOptions>, reads: LinkRead[], unread: string[], question?: string): Promise<string> {
  const content = reads.map(linkContent);
  if (unread.length) {
    content.push({
      source: 'links of the message that were not read, each with the reason',
      author: 'the link reader (the addresses come from the message)',
      text: unread.join('\n'),
      use: 'These links could not be read: do not guess what they say; if the question needs them, say they could not be read.',
    });
  }
  return ctx.ai.respond(ctx, { ...(question ? { text: question } : {}), content });
}

/**
 * One running links plugin's handling: the cache, reading a link, the model's turn with what was read, `.read` and
 * `fetch_url`'s work. index.ts makes it with the first message, command or tool call that needs it.
 *
 * @example const links = setupLinks(host, {}); await links.onLinks(ctx);
 */
export function setupLinks(host: PluginHost<LinksOptions>, hooks: LinksTestHooks) {
  const cache = new LinkCache();

  function reader(): LinkReader {
    const o = host.options();
    return {
      jail: host.jail,
      ytdlp: host.setting('YTDLP_PATH')?.trim() || 'yt-dlp',
      allowPrivateHosts: host.settings.egressAllowPrivateHosts,
      resolve: hooks.resolve,
      allowForTests: hooks.allowForTests,
      maxBytes: o.maxBytes,
      timeoutSeconds: o.timeoutSeconds,
      readSeconds: o.readSeconds,
      readDeadline: hooks.readDeadline,
      maxRedirects: o.maxRedirects,
      maxChars: o.maxChars,
      subtitleLanguages: o.subtitleLanguages,
      documentLimits: { maxPages: 100, maxScanPages: 1, maxUnzippedBytes: 50_000_000, seconds: 30, memoryMb: 512 },
    };
  }

  /** One link, from the cache when it was read within `cacheHours`. */
  function read(url: URL): Promise<LinkRead> {
    if (isVideoLink(url) && !host.setting('YTDLP_PATH')?.trim() && !host.capabilities.has('ytdlp')) {
      return Promise.reject(new LinkRefused(`I cannot read videos here: ${host.capabilities.status('ytdlp').detail}.`));
    }
    return cache.get(linkKey(url), host.options().cacheHours * 3_600_000, () => readLink(url, reader()));
  }

  const isOff = async (chatId: string) => (await host.store.chat(chatId).doc(CHAT_SETTING).get()).off;

  async function answer(ctx: MessageContext<LinksOptions>, reads: LinkRead[], unread: string[], notices: string[], question?: string): Promise<void> {
    let said: string;
    try {
      said = await respondWithLinks(ctx, reads, unread, question);
    } catch (err) {
      if (!(err instanceof AllProvidersFailedError)) throw err;
      ctx.state[TURN_FAILED] = true;
      await ctx.reply(err.message);
      return;
    }
    await ctx.reply([...notices, said].filter((part) => part.trim()).join('\n\n'));
  }

  /** A message the bot answers that carries links: the first few read, then the model answers with them. */
  async function onLinks(ctx: MessageContext<LinksOptions>): Promise<void> {
    if (await isOff(ctx.chatId)) return answer(ctx, [], [], []);
    const cap = host.options().maxLinksPerMessage;
    const links = linksOf(ctx);
    const taken = links.slice(0, cap);
    ctx.progress(taken.length > 1 ? 'reading the links…' : 'reading the link…');
    const outcomes = await Promise.all(taken.map((url) => read(url).then((r) => ({ url, read: r }), (err: unknown) => ({ url, refused: refusalOf(err, url, ctx) }))));
    const reads = outcomes.flatMap((o) => ('read' in o ? [o.read] : []));
    const refused = outcomes.flatMap((o) => ('refused' in o ? [o] : []));
    const notices = refused.map((o) => `⚠️ ${o.refused}`);
    if (links.length > cap) notices.push(`(I read only the first ${cap} links of your message.)`);
    const unread = [...refused.map((o) => `${o.url.href} (${o.refused})`), ...links.slice(cap).map((u) => `${u.href} (not read: only ${cap} links are read per message)`)];
    await answer(ctx, reads, unread, notices);
  }

  /** `.read <link> [question]`, `.read on|off`, `.read` alone for the state and how to use it. */
  async function readCommand(ctx: MessageContext<LinksOptions> & { args: string }): Promise<void> {
    const prefix = host.config().prefix;
    const word = ctx.args.trim().toLowerCase();
    if (word === 'on' || word === 'off') {
      const ids = [ctx.senderId, ctx.message.senderAltId].filter((id): id is string => Boolean(id));
      const may = ctx.isOwner || !ctx.message.isGroup || (await host.isGroupAdmin(ctx.chatId, ids));
      if (!may) {
        await ctx.reply('Only a group admin or the bot owner can turn link reading on or off in this group.');
        return;
      }
      await host.store.chat(ctx.chatId).doc(CHAT_SETTING).save((doc) => void (doc.off = word === 'off'));
      await ctx.reply(word === 'off' ? `Link reading is off in this chat: I no longer open links here (${prefix}read on turns it back on).` : 'Link reading is on in this chat: I read the links in messages I answer.');
      return;
    }
    const off = await isOff(ctx.chatId);
    const [url] = linksIn(ctx.args.replace(/^(?!https?:\/\/)([\w-]+(\.[\w-]+)+(:\d+)?(\/\S*)?)/i, 'https://$1'));
    if (!url) {
      await ctx.reply(
        [
          `*${prefix}read <link> [question]*: I read a web page, a PDF or office file, or a video's transcript (YouTube, Vimeo) and answer about it.`,
          `Links in a message I answer are read too (at most ${host.options().maxLinksPerMessage} per message).`,
          `In this chat link reading is *${off ? 'off' : 'on'}* (${prefix}read ${off ? 'on' : 'off'} to turn it ${off ? 'on' : 'off'}).`,
        ].join('\n'),
      );
      return;
    }
    if (off) {
      await ctx.reply(`Link reading is turned off in this chat (${prefix}read on turns it back on).`);
      return;
    }
    ctx.progress('reading the link…');
    let page: LinkRead;
    try {
      page = await read(url);
    } catch (err) {
      await ctx.reply(refusalOf(err, url, ctx));
      return;
    }
    const question = ctx.args.replace(/\S*/, '').trim();
    await answer(ctx, [page], [], [], `${url.href} ${question || DEFAULT_QUESTION}`);
  }

  /** `fetch_url`'s work (the tool is declared in index.ts). */
  async function fetchUrl(args: { url: string }, call: ToolCall): Promise<string> {
    if (await isOff(call.chatId)) return 'Reading links is turned off in this chat. Tell the user you cannot open links here.';
    const [url] = linksIn(/^https?:\/\//i.test(args.url.trim()) ? args.url.trim() : `https://${args.url.trim()}`);
    if (!url) return 'Error: that is not an http(s) URL.';
    try {
      const page = await read(url);
      call.cite([page.url]);
      // Outside text: the core frames it as content before the model sees it.
      return toolResult(page);
    } catch (err) {
      return `Could not read it: ${refusalOf(err, url, call.ctx as MessageContext<LinksOptions>)}`;
    }
  }

  return { onLinks, readCommand, fetchUrl, stop: () => cache.clear() };
}
