import { randomInt } from 'node:crypto';
import type { BotConfig } from '../../services/config/schema.js';
import type { Logger } from '../../api/logger.js';
import { userPart } from '../port/ids.js';
import type { HistoryStore } from '../../services/store/history.js';
import type { IncomingMessage } from '../port/message.js';
import type { AccessDocument, AccessDocumentStore, Activation, PairingRequest } from './access-store.js';
import { MAX_PERSONA_CHARS } from '../../api/errors.js';

/** A pairing code is good for this long. */
export const PAIRING_CODE_TTL_MS = 60 * 60 * 1000;
/** Messages of a waiting stranger kept to be answered after approval. */
export const MAX_HELD_MESSAGES = 3;
/** Pairing requests waiting at once, over all senders: a flood of strangers cannot flood the owners. */
export const MAX_PENDING_REQUESTS = 20;
/** Letters and digits that cannot be mistaken for each other (no 0/O, 1/I/L). */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;

export interface AccessControlDeps {
  file: AccessDocumentStore;
  config: () => BotConfig;
  log: Logger;
  histories: HistoryStore;
  /** Sends a text to every owner's private chat (and the console's operator). */
  tellOwners: (text: string) => Promise<void>;
  /** Hands a held message to the bot again, after approval. */
  redeliver: (message: IncomingMessage) => Promise<void>;
  now?: () => number;
}

export type ApproveResult = { ok: true; request: PairingRequest; answered: number } | { ok: false; reason: string };

/** The digits a person is known by in the lists (`628…@s.whatsapp.net` → `628…`). */
const userOf = (id: string) => userPart(id);

/**
 * Who the bot answers and how, as the owners decide it in chats and on the dashboard: pairing of strangers (codes,
 * held messages, approvals), groups an owner opened (`.activation`), a persona per chat, and chats paused because
 * the owner took them over from the phone. Everything is kept in the store database (`core` access); reads are synchronous
 * (asked for every message) once `load()` has run. `.mydata` and chat moves follow from its declaration (ACCESS_STORE),
 * which changes the document in place: hand this the core stores' copy of it, so it sees those changes.
 */
export class AccessControl {
  private doc!: AccessDocument;
  /** The original held messages (with their media), by pairing code; the file keeps their texts for a restart. */
  private readonly heldOriginals = new Map<string, IncomingMessage[]>();
  /** Strangers told that no more requests are taken, with when: told once an hour, not once a message. */
  private readonly turnedAway = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly deps: AccessControlDeps) {
    this.now = deps.now ?? Date.now;
  }

  async load(): Promise<void> {
    this.doc = await this.deps.file.get();
  }

  flush(): Promise<void> {
    return this.deps.file.flush();
  }

  private save(): Promise<void> {
    return this.deps.file.update(() => undefined).then(() => undefined);
  }

  // ---- pairing ----

  /** True when an owner approved this sender (any of their ids). */
  isApproved(ids: string[]): boolean {
    const users = ids.map(userOf).filter(Boolean);
    return this.doc.approved.some((a) => users.includes(a.id));
  }

  approved(): ReadonlyArray<AccessDocument['approved'][number]> {
    return this.doc.approved;
  }

  /** The pairing requests still waiting (not expired, not denied), oldest first. */
  pending(): PairingRequest[] {
    this.expire();
    return this.doc.pending.filter((p) => !p.denied);
  }

  private expire(): void {
    const cutoff = this.now() - PAIRING_CODE_TTL_MS;
    const before = this.doc.pending.length;
    this.doc.pending = this.doc.pending.filter((p) => {
      if (p.at > cutoff) return true;
      this.heldOriginals.delete(p.code);
      return false;
    });
    if (this.doc.pending.length !== before) void this.save().catch(() => undefined);
  }

  private requestOf(ids: string[]): PairingRequest | undefined {
    const users = ids.map(userOf);
    return this.doc.pending.find((p) => users.includes(userOf(p.sender)) || (p.senderAltId !== undefined && users.includes(userOf(p.senderAltId))));
  }

  private newCode(): string {
    for (;;) {
      let code = '';
      for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
      if (!this.doc.pending.some((p) => p.code === code)) return code;
    }
  }

  /**
   * A private message from someone not let in: held (never sent to the model). The first one of a request is answered
   * with a pairing code and the owners are told; later ones are held quietly (up to MAX_HELD_MESSAGES). Resolves with
   * the text to answer the stranger, or undefined to stay quiet.
   */
  async holdStranger(message: IncomingMessage): Promise<string | undefined> {
    this.expire();
    const ids = message.senderAltId ? [message.senderId, message.senderAltId] : [message.senderId];
    const text = message.text ?? '';
    const held = { id: message.id, text, at: message.timestamp, ...(message.media ? { media: message.media.kind } : {}) };
    const existing = this.requestOf(ids);
    if (existing) {
      if (!existing.denied && existing.held.length < MAX_HELD_MESSAGES) {
        existing.held.push(held);
        this.heldOriginals.get(existing.code)?.push(message);
        await this.save();
      }
      return undefined;
    }
    if (this.pending().length >= MAX_PENDING_REQUESTS) {
      const user = userOf(message.senderId);
      const told = this.turnedAway.get(user);
      if (told !== undefined && this.now() - told < PAIRING_CODE_TTL_MS) return undefined;
      this.turnedAway.set(user, this.now());
      this.deps.log.warn({ pending: MAX_PENDING_REQUESTS }, 'a stranger wrote while the pairing requests are full: not giving out a new code');
      return 'Sorry, I am not taking new contacts right now. Please try again later.';
    }
    const request: PairingRequest = {
      code: this.newCode(),
      sender: message.senderId,
      ...(message.senderAltId ? { senderAltId: message.senderAltId } : {}),
      ...(message.senderName ? { senderName: message.senderName.slice(0, 80) } : {}),
      chatId: message.chatId,
      at: this.now(),
      held: [held],
    };
    this.doc.pending.push(request);
    this.heldOriginals.set(request.code, [message]);
    await this.save();
    const prefix = this.deps.config().prefix;
    const who = `${request.senderName ? `${request.senderName} ` : ''}(+${userOf(request.sender)})`;
    this.deps.log.info({ sender: request.sender }, 'a stranger wrote: gave out a pairing code and told the owners');
    await this.deps
      .tellOwners(
        `Pairing request: ${who} wrote to me. Code: ${request.code}\nSend ${prefix}approve ${request.code} to let them talk to me (I then answer what they sent), or ${prefix}deny ${request.code}. The code expires in an hour.`,
      )
      .catch((err: unknown) => this.deps.log.warn({ err }, 'could not tell the owners about a pairing request'));
    return `Hi! I only talk to people my owner has let in. Your pairing code is ${request.code}. My owner has been told; once they approve it (within an hour) I will answer your message.`;
  }

  /** `.approve <code>`: lets the sender in for good and answers what they sent meanwhile. */
  async approve(code: string, by: string): Promise<ApproveResult> {
    const request = this.findCode(code);
    if (!request) return { ok: false, reason: this.unknownCode(code) };
    this.doc.pending = this.doc.pending.filter((p) => p !== request);
    const user = userOf(request.sender);
    if (!this.doc.approved.some((a) => a.id === user)) this.doc.approved.push({ id: user, ...(request.senderName ? { name: request.senderName } : {}), by, at: this.now() });
    await this.save();
    const originals = this.heldOriginals.get(request.code);
    this.heldOriginals.delete(request.code);
    const messages =
      originals ??
      request.held.map((h): IncomingMessage => ({
        id: h.id,
        chatId: request.chatId,
        senderId: request.sender,
        ...(request.senderAltId ? { senderAltId: request.senderAltId } : {}),
        ...(request.senderName ? { senderName: request.senderName } : {}),
        isGroup: false,
        text: h.text,
        mentions: [],
        timestamp: h.at,
      }));
    this.deps.log.info({ sender: request.sender, by, held: messages.length }, 'a pairing request was approved');
    // Handed to the bot's queue, not waited for here: the owner's chat is answered at once.
    for (const m of messages) void this.deps.redeliver(m).catch((err: unknown) => this.deps.log.error({ err }, 'could not answer a held message'));
    return { ok: true, request, answered: messages.length };
  }

  /** `.deny <code>`: the held messages are dropped; the sender gets no new code until this one would have expired. */
  async deny(code: string, by: string): Promise<ApproveResult> {
    const request = this.findCode(code);
    if (!request) return { ok: false, reason: this.unknownCode(code) };
    request.denied = true;
    request.held = [];
    this.heldOriginals.delete(request.code);
    await this.save();
    this.deps.log.info({ sender: request.sender, by }, 'a pairing request was denied');
    return { ok: true, request, answered: 0 };
  }

  /** Takes a sender off the approved list (dashboard). */
  async revokeApproval(id: string): Promise<boolean> {
    const user = userOf(id);
    const before = this.doc.approved.length;
    this.doc.approved = this.doc.approved.filter((a) => a.id !== user);
    if (this.doc.approved.length === before) return false;
    await this.save();
    return true;
  }

  private findCode(code: string): PairingRequest | undefined {
    const wanted = code.trim().toUpperCase();
    return this.pending().find((p) => p.code === wanted);
  }

  private unknownCode(code: string): string {
    const shown = code.trim().slice(0, 12) || '(none)';
    return `No pairing request has the code ${shown}: it may be mistyped, already used, or expired (codes last an hour).`;
  }

  // ---- groups ----

  /** How the bot takes part in a group, as an owner set it; undefined when no owner did. */
  activation(chatId: string): Activation | undefined {
    return this.doc.groups[chatId]?.mode;
  }

  groups(): Readonly<AccessDocument['groups']> {
    return this.doc.groups;
  }

  async setActivation(chatId: string, mode: Activation, by: string): Promise<void> {
    this.doc.groups[chatId] = { mode, by, at: this.now() };
    await this.save();
  }

  // ---- persona ----

  persona(chatId: string): string | undefined {
    return this.doc.personas[chatId]?.text;
  }

  personas(): Readonly<AccessDocument['personas']> {
    return this.doc.personas;
  }

  /** Sets (text) or removes (undefined) a chat's persona. Throws when the text is too long. */
  async setPersona(chatId: string, text: string | undefined, by: string): Promise<void> {
    if (text === undefined || !text.trim()) delete this.doc.personas[chatId];
    else {
      if (text.length > MAX_PERSONA_CHARS) throw new RangeError(`a persona is at most ${MAX_PERSONA_CHARS} characters (this one has ${text.length})`);
      this.doc.personas[chatId] = { text: text.trim(), by, at: this.now() };
    }
    await this.save();
  }

  // ---- taking a chat over ----

  /** Until when the bot is quiet in a chat: unix ms, null for "until `.bot on`", undefined when it is not paused. */
  pausedUntil(chatId: string): number | null | undefined {
    const entry = this.doc.paused[chatId];
    if (!entry) return undefined;
    if (entry.until !== null && entry.until <= this.now()) {
      delete this.doc.paused[chatId];
      void this.save().catch(() => undefined);
      return undefined;
    }
    return entry.until;
  }

  /** The paused chats (expired pauses left out). */
  paused(): Array<{ chatId: string; until: number | null; by: string; at: number }> {
    return Object.keys(this.doc.paused)
      .filter((chatId) => this.pausedUntil(chatId) !== undefined)
      .map((chatId) => ({ chatId, ...this.doc.paused[chatId] }));
  }

  async pause(chatId: string, until: number | null, by: string): Promise<void> {
    this.doc.paused[chatId] = { until, by, at: this.now() };
    await this.save();
  }

  async resume(chatId: string): Promise<boolean> {
    if (!this.doc.paused[chatId]) return false;
    delete this.doc.paused[chatId];
    await this.save();
    return true;
  }

  /**
   * A message the account's owner typed on the phone into a chat (WhatsApp `fromMe`, not sent by the bot; console
   * `:fromme`): `.bot on` hands the chat back, `.bot off` pauses it until `.bot on`, anything else pauses the bot
   * there for `takeover.minutes` and goes into the chat's history as the account's own words.
   */
  async ownerTyped(message: IncomingMessage): Promise<void> {
    const text = (message.text ?? '').trim();
    const prefix = this.deps.config().prefix;
    const command = text.toLowerCase().replace(/\s+/g, ' ');
    if (command === `${prefix}bot on`) {
      await this.resume(message.chatId);
      this.deps.log.info({ chat: message.chatId }, 'the owner handed the chat back to the bot from the phone');
      return;
    }
    if (command === `${prefix}bot off`) {
      await this.pause(message.chatId, null, 'phone');
      this.deps.log.info({ chat: message.chatId }, 'the owner paused the bot in a chat from the phone');
      return;
    }
    if (isAutoReply(text, this.deps.config().takeover.autoReplies)) {
      // WhatsApp Business sent its greeting or away message as the account: context, but nobody took the chat over.
      await this.deps.histories.append(message.chatId, { id: message.id, role: 'assistant', text, at: message.timestamp });
      this.deps.log.info({ chat: message.chatId }, "an own message matched takeover.autoReplies (the WhatsApp Business app's greeting or away message): the bot keeps answering there");
      return;
    }
    const current = this.pausedUntil(message.chatId);
    const until = current === null ? null : this.now() + this.deps.config().takeover.minutes * 60_000;
    await this.pause(message.chatId, until, 'phone');
    if (text || message.media) {
      await this.deps.histories.append(message.chatId, { id: message.id, role: 'assistant', text: text || `(${message.media?.kind})`, at: message.timestamp, ...(message.media ? { media: message.media.kind } : {}) });
    }
    this.deps.log.info({ chat: message.chatId, until }, 'the owner wrote from the phone: the bot is quiet in that chat for now');
  }
}

/** True when `text` is one of the owner's listed automatic texts, case and runs of spaces aside. */
function isAutoReply(text: string, autoReplies: readonly string[]): boolean {
  if (!text || !autoReplies.length) return false;
  const plain = (t: string) => t.trim().replace(/\s+/g, ' ').toLowerCase();
  const said = plain(text);
  return autoReplies.some((reply) => plain(reply) === said);
}
