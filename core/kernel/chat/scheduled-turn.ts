import { randomUUID } from 'node:crypto';
import type { AccessControl } from '../access/access-control.js';
import type { BotConfig } from '../../services/config/schema.js';
import { botAnswers, isBlocked, isOwnerMessage, senderIds } from '../plugin/access.js';
import type { AiService, MessageContext } from '../plugin/message-context.js';
import type { IncomingMessage } from '../port/message.js';
import { userPart } from '../port/ids.js';
import { isGroupChatOf, isOperator, type SessionState, type Transport } from '../port/transport.js';
import { PromptRefused } from '../../api/errors.js';

export interface ScheduledTurnDeps {
  config: () => BotConfig;
  access: AccessControl;
  ai: AiService;
  transport: () => Transport | undefined;
  /** The context of a message (the bot's own: replies, history, memory and tools bound to its chat). */
  context: (message: IncomingMessage) => MessageContext;
  /** Runs `job` in the chat's queue, behind the messages being handled there; false when it was not taken (stopping). */
  inChatQueue: (chatId: string, job: () => Promise<void>) => Promise<boolean>;
  /** True once the bot began to stop: no new turn starts. */
  stopping: () => boolean;
}

/** What the model is told about a turn no one typed just now. */
const SCHEDULED_SYSTEM =
  'This message is a task the user scheduled earlier; it runs now, at its time, and the user is not waiting in the chat. Do what it asks with your tools and write the answer for them to read later. Do not ask questions back: nobody is there to answer.';

/**
 * Runs `text` in `chatId` as a turn of `senderId` made now (a task that person scheduled): their access decides (the
 * block list, `access.mode`, the chat being paused or a group switched off), the tools are those that person may use
 * in that chat, their AI budget is spent, and the turn is kept in the chat's history. The chat and the person are the
 * ones given here — the model never names them. Resolves with the answer (empty when the model chose silence);
 * rejects with `PromptRefused` when the turn may not run now, or with the chain's error when no provider answered.
 */
export async function runScheduledTurn(deps: ScheduledTurnDeps, chatId: string, senderId: string, text: string, extraSystem?: string, hidden = false): Promise<string> {
  if (deps.stopping()) throw new PromptRefused('the bot is stopping');
  const transport = deps.transport();
  if (!transport) throw new PromptRefused('the bot is not connected yet', true);
  // The answer could not be delivered now: refused before the model is asked (no budget spent, nothing in the history).
  const link = transport.session().status;
  if (link !== 'linked') throw new PromptRefused(`the bot is not connected to WhatsApp right now (${linkInWords[link]})`, true);
  const isGroup = isGroupChatOf(transport, chatId);
  // The person at the machine (console) is an owner in their own chat and in the groups they type in.
  const fromOperator = isOperator(transport, senderId);
  const message: IncomingMessage = {
    id: `scheduled-${randomUUID()}`,
    chatId,
    senderId,
    isGroup,
    text,
    mentions: [],
    timestamp: Date.now(),
    scheduled: true,
    ...(fromOperator ? { fromOperator: true } : {}),
  };
  const cfg = deps.config();
  const why = refusal(message, cfg, deps.access);
  if (why) throw new PromptRefused(why);
  let answer = '';
  let failure: unknown;
  const taken = await deps.inChatQueue(chatId, async () => {
    const ctx = deps.context(message);
    try {
      // Over the person's budget: refused (PromptRefused), not answered with the budget sentence as if it were the answer.
      answer = await deps.ai.respond(ctx, { system: extraSystem ? `${SCHEDULED_SYSTEM}\n${extraSystem}` : SCHEDULED_SYSTEM, overBudget: 'throw', ...(hidden ? { notInHistory: true } : {}) });
    } catch (err) {
      failure = err;
    }
  });
  if (!taken) throw new PromptRefused('the bot is stopping');
  if (failure) throw failure;
  return answer;
}

/** A transport's link state as the person who set the task reads it. */
const linkInWords: Record<Exclude<SessionState['status'], 'linked'>, string> = {
  connecting: 'it is reconnecting',
  qr: 'it waits to be linked again',
  offline: 'it is offline',
};

/** Why the bot would not answer this person in this chat now (see access-gate), or undefined when it would. */
function refusal(message: IncomingMessage, cfg: BotConfig, access: AccessControl): string | undefined {
  const ids = senderIds(message);
  if (isBlocked(ids, cfg)) return 'you are blocked from using the bot';
  const owner = isOwnerMessage(message, cfg);
  if (!owner && !botAnswers(ids, cfg) && !(cfg.access.mode !== 'owners' && access.isApproved(ids)) && !(message.isGroup && cfg.access.mode === 'pairing')) {
    return 'the bot no longer answers you';
  }
  if (access.pausedUntil(message.chatId) !== undefined) return 'the bot is paused in this chat';
  if (message.isGroup) {
    // On the owner's own number only an owner's `.activation` opens a group (see access-gate).
    const open = cfg.groups.policy === 'open' && cfg.account?.mode !== 'self-chat';
    const mode = access.activation(message.chatId) ?? (open ? 'mention' : 'off');
    if (mode === 'off') return 'the bot is switched off in this group';
  }
  return undefined;
}
