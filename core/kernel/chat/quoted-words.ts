import type { Capabilities } from '../capabilities/capabilities.js';
import type { Logger } from '../../services/log/logger.js';
import type { QuotedWordsEntry } from '../plugin/instance.js';
import type { PluginRegistry } from '../plugin/registry.js';
import type { MessageContext } from '../plugin/message-context.js';
import type { QuotedWords } from '../plugin/offer.js';
import type { IncomingMedia, QuotedMessage } from '../port/message.js';
import { inIdList } from '../port/ids.js';
import { calledOf, quotedDeletedSentence } from '../pipeline/quoted-deleted.js';
import { quotedContent } from './quoted-content.js';

/** The most characters of a quoted message's words the model gets (the rest is cut, and the model is told so). */
export const QUOTED_WORDS_LIMIT = 8000;

/** Where one message's answer from the readers is kept, so a second `respond` of the same turn asks no one again. */
const ASKED = Symbol('quoted words asked');

type QuotedMedia = QuotedMessage & { media: IncomingMedia };

/**
 * The reader for the quoted message's media kind: the first active plugin (routing order) offering that kind, its
 * plugin's and its own `needs` met, the sender allowed to use the plugin. Undefined when no plugin offers one.
 */
export function quotedWordsReaderFor(registry: PluginRegistry, capabilities: Capabilities, ctx: MessageContext): QuotedWordsEntry | undefined {
  const kind = ctx.message.quoted?.media?.kind;
  if (!kind) return undefined;
  for (const state of registry.active()) {
    const plugin = state.plugin;
    const reader = state.instance!.quotedWords.find((r) => r.media.includes(kind));
    if (!reader) continue;
    if (capabilities.lacks(plugin.needs ?? []) || capabilities.lacks(reader.needs ?? [])) continue;
    if (!registry.mayUse(plugin.name, ctx.message)) continue;
    return reader;
  }
  return undefined;
}

/**
 * What the quoted media of this turn says, asked of its reader once per message: a message deleted for everyone is
 * never handed to a reader (the turn gets the one sentence that says so); a reader that fails is logged and the turn
 * goes on without the words (one bad plugin never takes the turn down).
 */
export function quotedWordsOf(ctx: MessageContext, reader: QuotedWordsEntry | undefined, log: Logger): Promise<QuotedWords> {
  const quoted = ctx.message.quoted;
  if (!quoted?.media || !reader) return Promise.resolve(undefined);
  const state = ctx.state as Record<symbol, Promise<QuotedWords> | undefined>;
  const asked = state[ASKED];
  if (asked) return asked;
  const answer = (async (): Promise<QuotedWords> => {
    if (quoted.deleted) return { unavailable: quotedDeletedSentence(quoted) };
    try {
      const found = await reader.read(ctx, quoted as QuotedMedia);
      // Only the two shapes the contract names, with text in them: anything else adds nothing.
      if (found && 'words' in found && typeof found.words === 'string') return { words: found.words, ...(typeof found.notice === 'string' && found.notice ? { notice: found.notice } : {}) };
      if (found && 'unavailable' in found && typeof found.unavailable === 'string' && found.unavailable.trim()) return { unavailable: found.unavailable };
      return undefined;
    } catch (err) {
      log.error({ err, kind: quoted.media!.kind }, 'the quoted message could not be put into words; the turn goes on without them');
      return undefined;
    }
  })();
  state[ASKED] = answer;
  return answer;
}

/** Whose the quoted message is, as the model is told: the bot's own, the sender's, or someone else's. */
function whose(ctx: MessageContext, quoted: QuotedMessage): string {
  const called = quoted.media ? calledOf(quoted.media.kind) : 'message';
  if (quoted.fromBot) return `a ${called} you sent earlier (your own words)`;
  if (isAskers(ctx, quoted)) return `a ${called} they sent earlier`;
  return `a ${called} someone else sent`;
}

/** Who the quoted message is from, as the content's header names them (the quote's sender is what the quoting client claims). */
function authorOf(ctx: MessageContext, quoted: QuotedMessage): string {
  if (quoted.fromBot) return 'you (the assistant), earlier';
  if (isAskers(ctx, quoted)) return 'the person asking now, earlier';
  return 'someone else in this chat';
}

/** True when the quote names the asker as its sender. */
export function isAskers(ctx: MessageContext, quoted: QuotedMessage): boolean {
  return Boolean(quoted.senderId) && inIdList(quoted.senderId, [ctx.senderId, ctx.message.senderAltId].filter((id): id is string => Boolean(id)));
}

/**
 * The words of the quoted message (a text message's own, or what a reader made of its media) as the model gets them: a
 * user turn put just before the question, saying what the question replies to, with the words framed as content
 * (`quotedContent`: markers their text cannot close, never instructions). Never kept in the chat's history (a note
 * deleted or erased later leaves nothing there), so the prompt's cached prefix stays the same.
 *
 * @example
 * quotedTurnText(ctx, 'meet me at nine'); // '[The next message replies to a voice note someone else sent.]\n[Content: …]\n<<<CONTENT\nmeet me at nine\nCONTENT>>>'
 */
export function quotedTurnText(ctx: MessageContext, words: string): string {
  const quoted = ctx.message.quoted!;
  const cut = words.length > QUOTED_WORDS_LIMIT;
  const called = quoted.media ? calledOf(quoted.media.kind) : 'message';
  return [
    `[The next message replies to ${whose(ctx, quoted)}.]`,
    quotedContent({
      source: `the ${called} the next message replies to${quoted.media ? ' (put into words)' : ''}`,
      author: authorOf(ctx, quoted),
      text: (cut ? words.slice(0, QUOTED_WORDS_LIMIT) : words).trim() || '(nothing could be made out in it)',
      ...(cut ? { note: `It is long: only its first ${QUOTED_WORDS_LIMIT} characters are quoted.` } : {}),
    }),
  ].join('\n');
}

/** What the model is told instead of the words, when the turn may not carry another person's message (see respond's onlyTurnsOf). */
export function quotedLeftOutText(ctx: MessageContext): string {
  return `[The next message replies to ${whose(ctx, ctx.message.quoted!)}. Its words are left out of this turn, which acts for one person only: say so if the question needs them.]`;
}

/**
 * What the model is told when the turn replies to a photo, voice note or file that no active plugin can read now (the
 * plugin is off, or the sender may not use it): that its content is not in this turn, so it says so rather than guess.
 */
export function quotedUnreadableText(ctx: MessageContext): string {
  return `[The next message replies to ${whose(ctx, ctx.message.quoted!)}. Its content is not available to you in this turn (only what the conversation above says of it): if the question is about what it shows or says, say you cannot tell rather than guess.]`;
}
