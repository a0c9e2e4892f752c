import type { WACallEvent } from '@whiskeysockets/baileys';
import type { Logger } from '../../services/log/logger.js';
import type { SentMessage } from '../../kernel/port/message.js';
import type { IncomingCall, TransportEvents } from '../../kernel/port/transport.js';
import { plainJid } from './message-mapper.js';
import type { WhatsAppSocket } from './socket.js';

export interface CallLayerDeps {
  log: Logger;
  /** The core's listeners now (`onCall` decides). */
  listeners: () => TransportEvents;
  sendText: (chatId: string, text: string) => Promise<SentMessage>;
  /** Work the transport's `idle()` and stop wait for. */
  track: (work: Promise<unknown>) => void;
}

/**
 * Incoming calls (Baileys' `call` event): each call that starts ringing (`offer`) is put to the core, which says
 * whether to decline it and with which message; the bot never accepts one. A call seen twice (Baileys reports an offer
 * again after a reconnect) is handled once.
 */
export class CallLayer {
  private readonly seen = new Set<string>();

  constructor(private readonly deps: CallLayerDeps) {}

  attach(socket: WhatsAppSocket, isCurrent: () => boolean): void {
    socket.ev.on('call', (calls) => {
      if (!isCurrent()) return;
      for (const call of calls) this.deps.track(this.ringing(socket, call));
    });
  }

  private async ringing(socket: WhatsAppSocket, event: WACallEvent): Promise<void> {
    if (event.status !== 'offer' || event.offline || this.seen.has(event.id)) return;
    this.seen.add(event.id);
    if (this.seen.size > 500) this.seen.delete(this.seen.values().next().value!);
    const onCall = this.deps.listeners().onCall;
    if (!onCall) return;
    const from = plainJid(event.callerPn) ?? plainJid(event.from) ?? event.from;
    const isGroup = Boolean(event.isGroup && event.groupJid);
    const call: IncomingCall = { id: event.id, from, chatId: isGroup ? plainJid(event.groupJid)! : plainJid(event.from) ?? from, isGroup, video: Boolean(event.isVideo) };
    try {
      const answer = await onCall(call);
      if (!answer.decline) {
        this.deps.log.info({ chat: call.chatId, video: call.video }, 'call left ringing (not answered)');
        return;
      }
      if (!socket.rejectCall) throw new Error('this WhatsApp socket cannot decline calls');
      await socket.rejectCall(event.id, event.from);
      this.deps.log.info({ chat: call.chatId, video: call.video }, 'call declined');
      if (answer.message) await this.deps.sendText(call.chatId, answer.message);
    } catch (err) {
      this.deps.log.warn({ err, chat: call.chatId }, 'could not decline a call or send its message');
    }
  }
}
