import { AllProvidersFailedError, ApiError, CodedError, OutboxClosedError, PollRefused, PromptRefused, RecipientRefused } from '../../api/errors.js';
import type { ApiTokenInfo } from '../../services/automation/api-tokens.js';
import { allows, chatOf, scopedChats, type ScopeAction } from '../../services/automation/scopes.js';
import type { Logger } from '../../services/log/logger.js';
import type { HistoryStore } from '../../services/store/history.js';
import { isGroupId, sameChat } from '../port/ids.js';
import type { AutomationDesk } from './desk.js';
import { messageContent, type BridgeContent } from './message-content.js';

/*
 * What an API token can make the bot do (the local HTTP API, and the MCP server on the same rules): send a text, list
 * chats, read a chat's recent messages, run a prompt in a chat. Each checks the token's scopes first; every message
 * goes through the one door for deliveries from outside the chats (`bot.automation.deliver`, desk.ts: the effect
 * guard's `bridge/deliver` effect, then the recipient rule and the outbox's pacing), so a token never reaches a chat
 * the bot may not write to first.
 */

/** What the actions need of the bot. */
export interface AutomationDeps {
  /** The one door for a message from outside the chats (AutomationDesk.deliver): guard, recipient rule, outbox. */
  deliver: AutomationDesk['deliver'];
  /** A turn no one typed now (Bot.promptAs): refused with PromptRefused when it may not run. */
  promptAs(chatId: string, senderId: string, text: string, system?: string): Promise<string>;
  histories: Pick<HistoryStore, 'recent' | 'chatIds'>;
  /** The id a prompt runs as: the person at the console, else the first owner of config.json; undefined: none. */
  owner(): string | undefined;
  log: Logger;
}

/** A message sent, or held for the owner's 👍 (the guard's policy asked for it). */
export type DeliveryOutcome = { status: 'sent'; to: string; id: string } | { status: 'held'; to: string; holdId: string; expiresAt: string };

/** A chat as the API lists it, with what this token may do there. */
export interface ChatView {
  id: string;
  kind: 'group' | 'private';
  may: Array<Exclude<ScopeAction, 'chats'>>;
}

/** A message of a chat's history as the API shows it. */
export interface MessageView {
  id?: string;
  /** The sender's id; the bot's own messages say `bot`. */
  from: string;
  fromBot: boolean;
  name?: string;
  text: string;
  /** ISO 8601. */
  at: string;
  media?: string;
}

/** How many recent messages `messages` gives at most (and by default). */
export const MAX_MESSAGES = 200;
export const DEFAULT_MESSAGES = 50;

/** What a prompt's turn is told besides the scheduled-task framing. */
const PROMPT_SYSTEM = "It was sent by the owner's automation through the bot's local API; the answer is delivered into this chat.";

/**
 * The actions of API tokens on the bot (see the file comment). Made once by the app; declares its guard effect.
 *
 * @example
 * const automation = new Automation({ deliver: (d) => bot.automation.deliver(d), … });
 * await automation.send(tokens.authenticate(header), '447700900123', 'The washing machine is done');
 */
export class Automation {
  constructor(private readonly deps: AutomationDeps) {}

  /**
   * Sends one message to `to` (a number or chat id) when `token` has `send:<chat>`: a text (`"…"` or `{ text }`),
   * `{ media }` or `{ poll }` (message-content.ts). Rejects with an ApiError otherwise.
   */
  async send(token: ApiTokenInfo, to: unknown, message: string | Record<string, unknown>): Promise<DeliveryOutcome> {
    const chat = this.chatFor(token, 'send', to);
    return this.deliver(token, chat, await messageContent(typeof message === 'string' ? { text: message } : message));
  }

  /**
   * Holds one message to `to` for the owner's 👍 whatever the guard's policy says (an MCP client's send outside the
   * token's `send:` scopes): checked as `send` checks it, then asked of the owners; sent only when they approve, still
   * under the recipient rule. Resolves with the hold.
   */
  async holdForOwner(token: ApiTokenInfo, to: unknown, message: Record<string, unknown>): Promise<DeliveryOutcome> {
    const chat = typeof to === 'string' ? chatOf(to) : undefined;
    if (!chat) throw new ApiError('API_BAD_REQUEST', 400, 'name the chat as a phone number (digits) or a chat id (<digits>@s.whatsapp.net, <id>@g.us, <digits>@lid)');
    const content = await messageContent(message);
    const outcome = await this.deps.deliver({ to: chat, ...content, mode: 'message', by: `mcp:${token.id}`, summary: `send ${contentInWords(content)} to ${chat} for the MCP client of the token "${token.name}"`, hold: true });
    if (outcome.status !== 'held') throw new ApiError('API_GUARD_DENIED', 403, 'not sent');
    return { status: 'held', to: chat, holdId: outcome.id, expiresAt: new Date(outcome.expiresAt).toISOString() };
  }

  /**
   * The chats `token` may see: with `chats`, every chat the bot has a history with, and those its scopes name; without
   * it, only those its scopes name. Each with what the token may do there.
   */
  async chats(token: ApiTokenInfo): Promise<ChatView[]> {
    const named = scopedChats(token.scopes);
    const known = allows(token.scopes, 'chats') ? await this.deps.histories.chatIds() : [];
    const all = [...named, ...known.filter((id) => !named.some((c) => sameChat(c, id)))];
    return all.map((id) => ({ id, kind: isGroupId(id) ? 'group' : 'private', may: (['send', 'read', 'prompt'] as const).filter((a) => allows(token.scopes, a, id)) }));
  }

  /** The last `limit` messages of `chat` (oldest first) when `token` has `read:<chat>`. */
  async messages(token: ApiTokenInfo, chat: unknown, limit: unknown = DEFAULT_MESSAGES): Promise<{ chat: string; messages: MessageView[] }> {
    const chatId = this.chatFor(token, 'read', chat);
    const count = limit === undefined || limit === '' ? DEFAULT_MESSAGES : Number(limit);
    if (!Number.isInteger(count) || count < 1 || count > MAX_MESSAGES) throw new ApiError('API_BAD_REQUEST', 400, `limit must be a whole number from 1 to ${MAX_MESSAGES}`);
    const entries = await this.deps.histories.recent(chatId, count);
    return {
      chat: chatId,
      messages: entries.map((e) => ({
        ...(e.id ? { id: e.id } : {}),
        from: e.role === 'assistant' ? 'bot' : (e.senderId ?? chatId),
        fromBot: e.role === 'assistant',
        ...(e.senderName ? { name: e.senderName } : {}),
        text: e.text,
        at: new Date(e.at).toISOString(),
        ...(e.media ? { media: e.media } : {}),
      })),
    };
  }

  /**
   * Runs `prompt` in `to` as the owner's turn (their access, tools and budget), when `token` has `prompt:<chat>`, and
   * delivers the answer there through the guard and the outbox. The answer is empty (`silent`) when the model chose
   * to say nothing.
   */
  async prompt(token: ApiTokenInfo, to: unknown, prompt: unknown): Promise<(DeliveryOutcome & { answer?: string }) | { status: 'silent'; to: string }> {
    const chat = this.chatFor(token, 'prompt', to);
    const words = requiredText(prompt, 'prompt');
    const owner = this.deps.owner();
    if (!owner) throw new ApiError('API_PROMPT_REFUSED', 409, 'a prompt runs as the owner, and config.json lists no owners: add your number to "owners"');
    let answer: string;
    try {
      answer = await this.deps.promptAs(chat, owner, words, PROMPT_SYSTEM);
    } catch (err) {
      throw apiErrorOf(err, this.deps.log);
    }
    if (!answer.trim()) return { status: 'silent', to: chat };
    const outcome = await this.deliver(token, chat, { text: answer });
    return outcome.status === 'sent' ? { ...outcome, answer } : outcome;
  }

  /** The chat `given` names, when `token` may do `action` there (else an ApiError: 400 no chat, 403 outside scopes). */
  private chatFor(token: ApiTokenInfo, action: Exclude<ScopeAction, 'chats'>, given: unknown): string {
    const chat = typeof given === 'string' ? chatOf(given) : undefined;
    if (!chat) throw new ApiError('API_BAD_REQUEST', 400, 'name the chat as a phone number (digits) or a chat id (<digits>@s.whatsapp.net, <id>@g.us, <digits>@lid)');
    if (!allows(token.scopes, action, chat)) throw new ApiError('API_SCOPE_REFUSED', 403, `the token "${token.name}" may not ${action === 'read' ? 'read' : action === 'send' ? 'send to' : 'run a prompt in'} ${chat}: it needs the scope ${action}:${chat}`);
    return chat;
  }

  /**
   * One message through the delivery door (a message in the chat the token's scope names, by someone who is not an
   * owner: `guard.others.here` and `guard.kinds.message` decide), then the bot-started send path.
   */
  private async deliver(token: ApiTokenInfo, chat: string, content: BridgeContent): Promise<DeliveryOutcome> {
    try {
      const outcome = await this.deps.deliver({ to: chat, ...content, mode: 'message', by: `api:${token.id}`, summary: `send ${contentInWords(content)} to ${chat} for the API token "${token.name}"` });
      if (outcome.status === 'denied') throw new ApiError('API_GUARD_DENIED', 403, `not sent: ${outcome.reason}`);
      if (outcome.status === 'held') return { status: 'held', to: chat, holdId: outcome.id, expiresAt: new Date(outcome.expiresAt).toISOString() };
      return { status: 'sent', to: chat, id: 'messageId' in outcome ? outcome.messageId : '' };
    } catch (err) {
      throw apiErrorOf(err, this.deps.log);
    }
  }
}

/** What a held message is, for the owner's question: the text, or what the file or poll is. */
export function contentInWords(content: BridgeContent): string {
  const quoted = (text: string) => `“${text.length > 200 ? `${text.slice(0, 200)}…` : text}”`;
  if ('text' in content) return quoted(content.text);
  if ('poll' in content) return `a poll ${quoted(content.poll.question)} (${content.poll.options.join(' / ')})`;
  const { kind, fileName, caption, data } = content.media;
  const kb = Math.max(1, Math.round((data.length * 3) / 4 / 1024));
  const what = { image: 'a picture', video: 'a video', audio: 'an audio file', voice: 'a voice note', document: `the document ${fileName ?? ''}`.trim() }[kind];
  return `${what} (${kb} KB)${caption ? ` captioned ${quoted(caption)}` : ''}`;
}

function requiredText(value: unknown, field: string): string {
  if (typeof value !== 'string' || !value.trim()) throw new ApiError('API_BAD_REQUEST', 400, `"${field}" must be a text that is not empty`);
  return value;
}

/** The ApiError a failure of the bot's send or turn is answered with (an unknown failure is passed on: a 500). */
function apiErrorOf(err: unknown, log: Logger): unknown {
  if (err instanceof ApiError) return err;
  if (err instanceof RecipientRefused) return new ApiError('API_RECIPIENT_REFUSED', 403, `not sent to ${err.chatId}: ${err.reason}`);
  if (err instanceof OutboxClosedError) return new ApiError('API_UNAVAILABLE', 503, err.message);
  // Checked before the guard was asked; what is left is a chat that shows no polls (the console shows them).
  if (err instanceof PollRefused) return new ApiError('API_BAD_POLL', 400, err.message);
  if (err instanceof PromptRefused) return err.transient ? new ApiError('API_UNAVAILABLE', 503, err.reason) : new ApiError('API_PROMPT_REFUSED', 409, err.reason);
  if (err instanceof AllProvidersFailedError || (err instanceof CodedError && err.code !== 'PLUGIN_STORE_WRITE_FAILED')) {
    log.warn({ err }, 'an API prompt got no answer');
    return new ApiError('API_UPSTREAM_FAILED', 502, 'no AI provider answered the prompt; try again later');
  }
  return err;
}
