import type { LegHealth } from '../providers/types.js';
import type { Transport } from '../../kernel/port/transport.js';

export interface Readiness {
  ready: boolean;
  /** Why the bot cannot answer now; empty when ready. Never chat content, ids or keys. */
  reasons: string[];
  /** True while the network restricts the account (it may refuse messages; nothing is resent). */
  restricted: boolean;
}

/** The restriction the transport reports in its session state (WhatsApp: 463 time-lock, message capping), if any. */
export function transportRestriction(transport: Transport | undefined): { reason: string; until?: number } | undefined {
  try {
    return transport?.session().restricted;
  } catch {
    return undefined;
  }
}

function wait(until: number, now: number): string {
  if (until === Infinity) return 'until restart';
  const seconds = Math.max(1, Math.ceil((until - now) / 1000));
  return `${seconds}s more`;
}

/**
 * Whether the bot can answer now: the transport is connected (console and memory: always; WhatsApp: linked and
 * open), the account is not restricted, and at least one AI provider leg is usable now.
 *
 * @example readiness(transport, chain.health()) // { ready: false, reasons: ['every AI provider leg is cooling down: …'], … }
 */
export function readiness(transport: Transport | undefined, legs: LegHealth[], now = Date.now()): Readiness {
  const reasons: string[] = [];
  const session = transport?.session();
  if (!transport || !session) reasons.push('the chat transport has not started yet');
  else if (session.status !== 'linked') {
    const why = session.lastError ? ` (${session.lastError})` : '';
    reasons.push(`${transport.name} is not connected: ${session.status}${why}`);
  }
  const restriction = transportRestriction(transport);
  if (restriction) {
    const until = restriction.until ? ` until ${new Date(restriction.until).toISOString().slice(0, 16).replace('T', ' ')} UTC` : '';
    // Nothing is held back while restricted: the network refuses what it refuses, and a refused message is not resent.
    reasons.push(`${transport?.name ?? 'the network'} restricts this account (${restriction.reason})${until}: it may refuse messages of the bot meanwhile, and refused ones are not resent`);
  }
  if (!legs.length) reasons.push('no AI provider leg is configured');
  else if (legs.every((leg) => leg.state !== 'healthy')) {
    const list = legs.map((leg) => `${leg.name} (${leg.lastFailure ?? leg.state}, ${wait(leg.coolingDownUntil ?? Infinity, now)})`);
    reasons.push(`every AI provider leg is cooling down: ${list.join(', ')}`);
  }
  return { ready: reasons.length === 0, reasons, restricted: Boolean(restriction) };
}
