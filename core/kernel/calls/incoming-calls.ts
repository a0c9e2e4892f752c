import type { CallRule } from '../../services/config/schema.js';
import { userPart } from '../port/ids.js';
import type { CallAnswer, IncomingCall } from '../port/transport.js';

/** The owners' rules for calls (config `calls`). */
export interface CallRules {
  private: CallRule;
  groups: CallRule;
  tellOwner: boolean;
}

/**
 * What the bot does with a ringing call: the rule of its kind (a person's, a group's) says whether it is declined and
 * with which message; it is never answered (the bot has no voice on a call). `tell` gets the owners' note when
 * `tellOwner` is on and the call was declined.
 *
 * @example
 * answerCall(config.calls, call, (text) => tellOwners(text)) // { decline: true, message: "I can't take calls…" }
 */
export function answerCall(rules: CallRules, call: IncomingCall, tell: (text: string) => Promise<void>): CallAnswer {
  const rule = call.isGroup ? rules.groups : rules.private;
  if (!rule.decline) return { decline: false };
  const message = rule.message.trim();
  if (rules.tellOwner) {
    const who = /^\d+$/.test(userPart(call.from)) && call.from.endsWith('@s.whatsapp.net') ? `+${userPart(call.from)}` : call.from;
    // Not waited for: the call is declined at once, the owners hear of it as the outbox paces it.
    void tell(`📞 ${call.video ? 'Video' : 'Voice'} call from ${who}${call.isGroup ? ` in the group ${call.chatId}` : ''}: declined${message ? ' with the message' : ''}.`).catch(() => undefined);
  }
  return { decline: true, ...(message ? { message } : {}) };
}
