import type { BotConfig } from '../../services/config/schema.js';
import type { Middleware } from './compose.js';
import { firstWord } from './match.js';
import { botAnswers, isBlocked, senderIds } from '../plugin/access.js';
import type { MessageContext } from '../plugin/types.js';
import type { AccessControl } from '../access/access-control.js';

/** Set in `ctx.state` when a chat's rule lets a message through without a mention (`.activation always`). */
export const ANSWER_WITHOUT_MENTION = 'answerWithoutMention';

/**
 * Who the bot answers at all (before the chat rules and observers, so nothing of a stranger's message reaches a plugin or the model):
 * the block list always wins; owners always pass; in a private chat `access.mode` decides — `everyone`, `owners`,
 * `allowList` (owners, `access.allow` and the senders an owner approved), or `pairing` (the same, and a stranger's
 * message is held and answered with a pairing code).
 */
export function whoIsAnswered(config: () => BotConfig, access: AccessControl): Middleware<MessageContext> {
  return (ctx, next) => {
    const cfg = config();
    const ids = senderIds(ctx.message);
    if (isBlocked(ids, cfg)) return undefined;
    if (ctx.isOwner || botAnswers(ids, cfg)) return next();
    const mode = cfg.access.mode;
    // Groups are opened by an owner (`chatRules`); pairing is for private chats.
    if (mode === 'pairing' && ctx.message.isGroup) return next();
    if (mode !== 'owners' && access.isApproved(ids)) return next();
    if (mode !== 'pairing' || ctx.message.isGroup) return undefined;
    return access.holdStranger(ctx.message).then((answer) => (answer ? ctx.reply(answer).then(() => undefined) : undefined));
  };
}

/**
 * How the bot takes part in this chat (before observers: where it does not take part, no plugin sees the message, so
 * nothing is downloaded, sent to a provider or archived; the text alone stays in history as context): a chat the owner took over from
 * the phone, or paused with `.bot off`, is not answered (only an owner's `.bot` goes through); in a group,
 * `.activation` decides — `always` answers every message, `mention` only mentions and replies, `off` (and, under
 * `groups.policy: "allowlist"`, a group no owner opened) nothing; `.activation` itself always reaches its handler,
 * which refuses members who are not owners.
 */
export function chatRules(config: () => BotConfig, access: AccessControl): Middleware<MessageContext> {
  return (ctx, next) => {
    const { prefix, groups } = config();
    const chatId = ctx.chatId;
    const word = ctx.text.startsWith(prefix) ? firstWord(ctx.text).word.toLowerCase() : '';
    if (access.pausedUntil(chatId) !== undefined) {
      if (ctx.isOwner && word === `${prefix}bot`) {
        ctx.state[ANSWER_WITHOUT_MENTION] = true;
        return next();
      }
      return keepAsContext(ctx);
    }
    if (!ctx.message.isGroup) return next();
    if (word === `${prefix}activation`) {
      ctx.state[ANSWER_WITHOUT_MENTION] = true;
      return next();
    }
    const mode = access.activation(chatId) ?? (groups.policy === 'open' ? 'mention' : 'off');
    if (mode === 'off') {
      // An owner's addressed command still works here (`.approve` in any chat).
      if (ctx.isOwner && ctx.addressed && word) return next();
      return keepAsContext(ctx);
    }
    if (mode === 'always') ctx.state[ANSWER_WITHOUT_MENTION] = true;
    return next();
  };
}

/** The message stays in the chat's history as context; nothing is answered and nothing goes to the model. */
function keepAsContext(ctx: MessageContext): Promise<void> | undefined {
  return ctx.text ? ctx.history.recordIncoming(ctx.text) : undefined;
}
