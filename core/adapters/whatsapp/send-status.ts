import { EventEmitter } from 'node:events';
import { proto, type BaileysEventMap, type WAMessage, type WAMessageUpdate } from '@whiskeysockets/baileys';
import type { Logger } from '../../services/log/logger.js';
import type { OwnerNotifier } from '../../services/notices/owner-notifier.js';
import { BoundedMap } from './caches.js';

/** A restriction WhatsApp placed on the account (new chats refused, messages capped). */
export interface Restriction {
  reason: string;
  /** When it ends (unix ms), when WhatsApp said so. */
  until?: number;
}

/**
 * Codes after which WhatsApp is asked whether the account is restricted. A 463 alone proves nothing: it is what
 * WhatsApp answers a 1:1 message without the contact's privacy token (a contact who never wrote to this account, a
 * fresh link), and Baileys 7 (rc14) attaches its "account restricted" text to every 463 without checking.
 */
const CHECK_CODES = new Set(['463']);
/** How long a restriction without an end date is assumed to last. */
const UNKNOWN_RESTRICTION_MS = 24 * 60 * 60_000;
/** Fewest minutes between two restriction checks (each is a query to WhatsApp). */
const CHECK_INTERVAL_MS = 10 * 60_000;

/** Readable meaning of the error codes WhatsApp puts in a send's ERROR ack. */
export function describeSendError(code: string): string {
  switch (code) {
    case '463':
      return 'refused for this contact (463): WhatsApp wants a privacy token the bot does not have for this chat yet (the person has not written to this account, or the device was linked anew)';
    case '479':
      return 'rejected by WhatsApp as invalid (479): stale device session or addressing';
    case '421':
      return 'rejected (421)';
    default:
      return `rejected with code ${code}`;
  }
}

/**
 * Tracks what happens to a message after `sendMessage` returned: WhatsApp reports failures (463, 479 …) only later,
 * as a `messages.update` with status ERROR for the message id, or, when Baileys' event buffer held both, folded into
 * the `messages.upsert` of the bot's own message (`onOwnUpserts`). Each failure is logged with its code and counted,
 * and the owners hear which chat did not get its message and why. A 463 is a failure for that contact, not proof of
 * a restriction: it makes the transport ask WhatsApp (`checkRestriction`, Baileys' `fetchAccountReachoutTimelock`,
 * at most once per 10 min), and only WhatsApp's answer (`reachoutTimeLock` in `connection.update`, also pushed by
 * WhatsApp itself) sets the restricted state, emits `restricted` and tells the owners. Nothing is resent: a resend
 * counts as another reach-out and worsens a restriction.
 *
 * @example
 * const status = new SendStatus(log, notices, () => sock.fetchAccountReachoutTimelock()); status.track(sentId, chatId);
 * sock.ev.on('messages.update', (u) => status.onUpdates(u));
 * status.events.on('restricted', (r) => limiter.pause(r)); // r undefined: lifted
 */
export class SendStatus {
  readonly events = new EventEmitter();
  private readonly sent = new BoundedMap<string, { chatId: string; at: number }>(2000);
  private readonly failures = new Map<string, number>();
  /** Ids whose failure was reported already. */
  private readonly failed = new BoundedMap<string, true>(2000);
  private restriction: Restriction | undefined;
  private lastCheckAt = -Infinity;

  constructor(
    private readonly log: Logger,
    private readonly notices: OwnerNotifier,
    /** Asks WhatsApp whether the account is restricted; the answer arrives as `reachoutTimeLock` (onConnectionUpdate). */
    private readonly checkRestriction: (() => Promise<unknown>) | undefined = undefined,
    private readonly now: () => number = () => Date.now(),
  ) {}

  track(id: string, chatId: string): void {
    if (id) this.sent.set(id, { chatId, at: this.now() });
  }

  onUpdates(updates: WAMessageUpdate[]): void {
    for (const { key, update } of updates) {
      if (!key?.fromMe || update?.status !== proto.WebMessageInfo.Status.ERROR) continue;
      // The same failure may come twice (as an update, and folded into the message's own upsert): counted once.
      if (key.id && this.failed.get(key.id)) continue;
      if (key.id) this.failed.set(key.id, true);
      const [code = 'unknown', text] = (update.messageStubParameters ?? []).map(String);
      const ours = key.id ? this.sent.get(key.id) : undefined;
      this.failures.set(code, (this.failures.get(code) ?? 0) + 1);
      const chat = ours?.chatId ?? key.remoteJid ?? 'unknown chat';
      this.log.warn({ id: key.id, chat, code, known: Boolean(ours), ...(text ? { text } : {}) }, `WhatsApp did not deliver a sent message: ${describeSendError(code)}; not resending`);
      this.notices.raise(`whatsapp-undelivered:${chat}`, `A message of the bot to ${chat} was not delivered: WhatsApp ${describeSendError(code)}. The bot does not resend it.${CHECK_CODES.has(code) ? ' This alone is no account restriction; the bot asks WhatsApp and says so if the account is restricted.' : ''}`);
      if (CHECK_CODES.has(code)) this.check();
    }
  }

  /**
   * The upserts of the bot's own messages: while Baileys' event buffer is on (it is, while any incoming stanza is being
   * handled), an ERROR ack that comes before the buffered upsert of the message is flushed is merged into that upsert
   * ("absorbed prior message update"), and no `messages.update` is emitted for it.
   */
  onOwnUpserts(messages: WAMessage[]): void {
    this.onUpdates(messages.filter((m) => m.key?.fromMe && m.status === proto.WebMessageInfo.Status.ERROR).map((m) => ({ key: m.key, update: { status: m.status, messageStubParameters: m.messageStubParameters } })));
  }

  /** Asks WhatsApp whether the account is restricted (not more than once per CHECK_INTERVAL_MS). */
  private check(): void {
    if (this.now() - this.lastCheckAt < CHECK_INTERVAL_MS) return;
    this.lastCheckAt = this.now();
    if (!this.checkRestriction) {
      this.log.warn('cannot ask WhatsApp whether the account is restricted (no check available); treating the 463 as a failure for that contact only');
      return;
    }
    this.checkRestriction().then(
      () => this.log.info({ restricted: Boolean(this.restriction) }, 'asked WhatsApp whether the account is restricted after a 463'),
      (err) => this.log.warn({ err }, 'could not ask WhatsApp whether the account is restricted; treating the 463 as a failure for that contact only'),
    );
  }

  /** `connection.update` with `reachoutTimeLock` (Baileys fetches it after a 463). */
  onConnectionUpdate(update: BaileysEventMap['connection.update']): void {
    const lock = update.reachoutTimeLock;
    if (!lock) return;
    if (lock.isActive) this.restrict({ reason: `reach-out time-lock (${lock.enforcementType ?? 'DEFAULT'})`, ...(lock.timeEnforcementEnds ? { until: lock.timeEnforcementEnds.getTime() } : {}) });
    else this.lift();
  }

  private restrict(next: Restriction): void {
    const was = this.current();
    this.restriction = { reason: next.reason, until: next.until ?? Math.max(was?.until ?? 0, this.now() + UNKNOWN_RESTRICTION_MS) };
    if (was && was.reason === next.reason && !next.until) return;
    const until = next.until ? ` until ${new Date(next.until).toISOString()}` : '';
    this.log.error({ reason: next.reason, until: next.until }, `WhatsApp restricted this account${until}: ${next.reason}`);
    this.notices.raise('whatsapp-restricted', `WhatsApp restricted the bot's account${until}: ${next.reason}. Messages to new chats fail meanwhile; the bot does not resend them. Slow down the bot's sending.`);
    this.events.emit('restricted', { ...this.restriction });
  }

  private lift(): void {
    if (!this.restriction) return;
    this.restriction = undefined;
    this.log.info('WhatsApp lifted the restriction of this account');
    this.notices.recover('whatsapp-restricted', "WhatsApp lifted the restriction of the bot's account.");
    this.events.emit('restricted', undefined);
  }

  /** The restriction in force, if any (an expired one is lifted here). */
  current(): Restriction | undefined {
    if (this.restriction?.until && this.restriction.until <= this.now()) this.lift();
    return this.restriction ? { ...this.restriction } : undefined;
  }

  /** Failed sends by WhatsApp error code since start. */
  failureCounts(): Record<string, number> {
    return Object.fromEntries(this.failures);
  }
}
