import { EventEmitter } from 'node:events';
import { ACCOUNT_RESTRICTED_TEXT, proto, type BaileysEventMap, type WAMessageUpdate } from '@whiskeysockets/baileys';
import type { Logger } from '../../log/logger.js';
import type { OwnerNotifier } from '../../notices/owner-notifier.js';
import { BoundedMap } from './caches.js';

/** A restriction WhatsApp placed on the account (new chats refused, messages capped). */
export interface Restriction {
  reason: string;
  /** When it ends (unix ms), when WhatsApp said so. */
  until?: number;
}

/** Codes that mean "the account is restricted", not "this one message failed". */
const RESTRICTION_CODES = new Set(['463']);
/** How long a restriction without an end date is assumed to last. */
const UNKNOWN_RESTRICTION_MS = 24 * 60 * 60_000;

/** Readable meaning of the error codes WhatsApp puts in a send's ERROR ack. */
export function describeSendError(code: string): string {
  switch (code) {
    case '463':
      return 'account restricted: WhatsApp refuses new chats for now (reach-out time-lock / message capping)';
    case '479':
      return 'rejected by WhatsApp as invalid (479): stale device session or addressing';
    case '421':
      return 'rejected (421)';
    default:
      return `rejected with code ${code}`;
  }
}

/**
 * Tracks what happens to a message after `sendMessage` returned: WhatsApp reports failures (463 restriction, 479 …)
 * only later, as a `messages.update` with status ERROR for the message id. Each failure is logged with its code and
 * counted; a restriction also sets the restricted state (until WhatsApp's time-lock ends), emits `restricted`, and
 * tells the owners. Nothing is resent: a resend to a restricted account counts as another reach-out and worsens it.
 *
 * @example
 * const status = new SendStatus(log, notices); status.track(sentId, chatId);
 * sock.ev.on('messages.update', (u) => status.onUpdates(u));
 * status.events.on('restricted', (r) => limiter.pause(r)); // r undefined: lifted
 */
export class SendStatus {
  readonly events = new EventEmitter();
  private readonly sent = new BoundedMap<string, { chatId: string; at: number }>(2000);
  private readonly failures = new Map<string, number>();
  private restriction: Restriction | undefined;

  constructor(private readonly log: Logger, private readonly notices: OwnerNotifier, private readonly now: () => number = () => Date.now()) {}

  track(id: string, chatId: string): void {
    if (id) this.sent.set(id, { chatId, at: this.now() });
  }

  onUpdates(updates: WAMessageUpdate[]): void {
    for (const { key, update } of updates) {
      if (!key?.fromMe || update?.status !== proto.WebMessageInfo.Status.ERROR) continue;
      const [code = 'unknown', text] = (update.messageStubParameters ?? []).map(String);
      const ours = key.id ? this.sent.get(key.id) : undefined;
      this.failures.set(code, (this.failures.get(code) ?? 0) + 1);
      this.log.warn({ id: key.id, chat: ours?.chatId ?? key.remoteJid, code, known: Boolean(ours) }, `WhatsApp did not deliver a sent message: ${describeSendError(code)}; not resending`);
      if (RESTRICTION_CODES.has(code) || text === ACCOUNT_RESTRICTED_TEXT) this.restrict({ reason: describeSendError(code) });
    }
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
