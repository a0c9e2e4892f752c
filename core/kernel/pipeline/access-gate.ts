import type { BotConfig } from '../../services/config/schema.js';
import type { Middleware } from './compose.js';
import { firstWord } from './match.js';
import { botAnswers, isBlocked, senderIds } from '../plugin/access.js';
import { userPart } from '../port/ids.js';
import type { MessageContext } from '../plugin/message-context.js';
import type { AccessControl } from '../access/access-control.js';
import { isSelfChat, onOwnersNumber } from '../access/self-chat.js';

/** Set in `ctx.state` when a chat's rule lets a message through without a mention (`.activation always`). */
export const ANSWER_WITHOUT_MENTION = 'answerWithoutMention';

/**
 * Who the bot answers at all (before the chat rules and observers, so nothing of a stranger's message reaches a plugin or the model):
 * the block list always wins; owners always pass; in a private chat `access.mode` decides — `everyone`, `owners`,
 * `allowList` (owners, `access.allow` and the senders an owner approved), or `pairing` (the same, and a stranger's
 * message is held and answered with a pairing code). Anyone not blocked reaches `.mydata` in their private chat.
 */
export function whoIsAnswered(config: () => BotConfig, access: AccessControl, ownIds: () => readonly string[] = () => []): Middleware<MessageContext> {
  return (ctx, next) => {
    const cfg = config();
    const ids = senderIds(ctx.message);
    if (isBlocked(ids, cfg)) return undefined;
    if (onOwnersNumber(cfg)) return ownNumberGate(ctx, next, cfg, access, ids, ownIds());
    if (ctx.isOwner || botAnswers(ids, cfg)) return next();
    const mode = cfg.access.mode;
    // Groups are opened by an owner (`chatRules`); pairing is for private chats.
    if (mode === 'pairing' && ctx.message.isGroup) return next();
    if (mode !== 'owners' && access.isApproved(ids)) return next();
    // What the bot keeps about someone is theirs to see and delete, let in or not (it keeps what they say in groups):
    // `.mydata` in their private chat reaches its handler; nothing else of theirs does.
    if (!ctx.message.isGroup && isMyDataCommand(ctx.text, cfg.prefix)) return next();
    if (mode !== 'pairing' || ctx.message.isGroup) return undefined;
    return access.holdStranger(ctx.message).then((answer) => (answer ? ctx.reply(answer).then(() => undefined) : undefined));
  };
}

/**
 * Self-chat mode (the bot runs on the owner's own number): the people who write are writing to the owner, not to a
 * bot. The owner's "Message yourself" chat is answered; a private chat only when the access rules name its sender
 * explicitly (`access.allow`, or an owner's approval) — never because of `everyone`, never with a pairing code, and an
 * owner listed in config.json writing to this number is writing to the owner too; a group goes on to `chatRules`,
 * where only an owner's `.activation` opens it. `.mydata` stays every person's right in their private chat.
 */
function ownNumberGate(ctx: MessageContext, next: () => Promise<void>, cfg: BotConfig, access: AccessControl, ids: string[], own: readonly string[]): Promise<void> | undefined {
  if (isSelfChat(ctx.message, own)) return next();
  if (ctx.message.isGroup) return next();
  if (ids.some((id) => cfg.access.allow.includes(userPart(id))) || access.isApproved(ids)) return next();
  if (isMyDataCommand(ctx.text, cfg.prefix)) return next();
  return undefined;
}

/** `.mydata`, `.mydata delete`, `.mydata delete confirm`: the privacy command anyone may use about themselves. */
export function isMyDataCommand(text: string, prefix: string): boolean {
  return text.startsWith(prefix) && firstWord(text).word.toLowerCase() === `${prefix}mydata`;
}

/**
 * How the bot takes part in this chat (before observers: where it does not take part, no plugin sees the message, so
 * nothing is downloaded, sent to a provider or archived; the text alone stays in history as context): a chat the owner took over from
 * the phone, or paused with `.bot off`, is not answered (only an owner's `.bot` goes through); in a group,
 * `.activation` decides — `always` answers every message, `mention` only mentions and replies, `off` (and, under
 * `groups.policy: "allowlist"`, a group no owner opened) nothing but an owner's command mentioning the bot. Where the
 * bot takes part, `.activation` always reaches its handler, which refuses members who are not owners.
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
    // On the owner's own number a group is open only where an owner said so: `groups.policy: "open"` is no such word.
    const policy = onOwnersNumber(config()) ? 'allowlist' : groups.policy;
    const mode = access.activation(chatId) ?? (policy === 'open' ? 'mention' : 'off');
    if (mode === 'off') {
      // Only an owner's command that mentions the bot is answered here (`.activation mention` to open it, `.approve`
      // in any chat): a member's, or one typed without a mention, stays context, so nobody makes a closed group's bot speak.
      if (ctx.isOwner && ctx.addressed && word) return next();
      return keepAsContext(ctx);
    }
    // In a group the bot takes part in, anyone may ask what the rule is without a mention (its handler refuses a change).
    if (word === `${prefix}activation`) {
      ctx.state[ANSWER_WITHOUT_MENTION] = true;
      return next();
    }
    if (mode === 'always') ctx.state[ANSWER_WITHOUT_MENTION] = true;
    return next();
  };
}

/** The message stays in the chat's history as context; nothing is answered and nothing goes to the model. */
function keepAsContext(ctx: MessageContext): Promise<void> | undefined {
  return ctx.text ? ctx.history.recordIncoming(ctx.text) : undefined;
}
