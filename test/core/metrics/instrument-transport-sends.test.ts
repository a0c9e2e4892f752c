import { expect } from 'chai';
import { BotMetrics } from '../../../core/services/metrics/bot-metrics.js';
import { instrumentTransport } from '../../../core/services/metrics/instrument-transport.js';
import type { IncomingMessage, SentMessage } from '../../../core/kernel/port/message.js';
import type { InboundHandler, Transport, TransportEvents } from '../../../core/kernel/port/transport.js';

/** A transport class (methods on the prototype, state on `this`), as the WhatsApp transport is. */
class ScriptedTransport {
  readonly name = 'scripted';
  /** A private field: reachable only when the method runs with the transport itself as `this`. */
  #ownId = 'own-id';
  handler: InboundHandler | undefined;
  events: TransportEvents | undefined;
  /** What the next editText answers (false: the network cannot edit). */
  canEdit = true;
  failSends = false;
  readonly sent: string[] = [];
  async start(onMessage: InboundHandler, events?: TransportEvents): Promise<void> {
    this.handler = onMessage;
    this.events = events;
  }
  async stop(): Promise<void> {}
  async sendText(chatId: string, text: string): Promise<SentMessage> {
    if (this.failSends) throw new Error('socket closed');
    this.sent.push(`${chatId}: ${text}`);
    return { id: `sent-${this.sent.length}` } as SentMessage;
  }
  async editText(): Promise<boolean> {
    return this.canEdit;
  }
  async react(chatId: string, _messageId: string, emoji: string): Promise<void> {
    this.sent.push(`${chatId}: ${emoji}`);
  }
  async setTyping(): Promise<void> {}
  ownIds(): string[] {
    return [this.#ownId];
  }
  session() {
    return { status: 'linked' as const };
  }
  push(chatId: string, id: string, kind?: 'voice'): Promise<void> {
    return this.handler!({ id, chatId, senderId: chatId, text: id, timestamp: Date.now(), isGroup: false, ...(kind ? { media: { kind } } : {}) } as IncomingMessage);
  }
}

async function counter(metrics: BotMetrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values ?? [])
    .filter((v) => Object.entries(labels).every(([k, want]) => (v.labels as Record<string, unknown>)[k] === want))
    .reduce((sum, v) => sum + Number(v.value), 0);
}

describe('metrics: sends, failures and transport events through the wrapper', () => {
  it('a voice note answered counts as answered voice; a reaction counts as a reaction sent', async () => {
    const metrics = new BotMetrics();
    const inner = new ScriptedTransport();
    const wrapped = instrumentTransport(inner as unknown as Transport, metrics);
    await wrapped.start(async (message) => {
      await wrapped.react(message.chatId, message.id, '👀');
      await wrapped.sendText(message.chatId, 'transcribed');
    });
    await inner.push('chat-a', 'v1', 'voice');
    expect(inner.sent).to.deep.equal(['chat-a: 👀', 'chat-a: transcribed']);
    expect(await counter(metrics, 'wa_bot_messages_answered_total', { kind: 'voice' })).to.equal(1);
    expect(await counter(metrics, 'wa_bot_messages_answered_total', { kind: 'text' })).to.equal(0);
    expect(await counter(metrics, 'wa_bot_messages_sent_total', { type: 'reaction' })).to.equal(1);
    expect(await counter(metrics, 'wa_bot_messages_sent_total', { type: 'text' })).to.equal(1);
  });

  it('an edit the network refuses (false) is neither a send nor an answer; a failed send rejects, counts as a failure and answers nothing', async () => {
    const metrics = new BotMetrics();
    const inner = new ScriptedTransport();
    const wrapped = instrumentTransport(inner as unknown as Transport, metrics);
    const outcomes: unknown[] = [];
    await wrapped.start(async (message) => {
      if (message.id === 'e1') outcomes.push(await wrapped.editText(message.chatId, 'old', 'new text'));
      else outcomes.push(await wrapped.sendText(message.chatId, 'reply').catch((err: Error) => err.message));
    });
    inner.canEdit = false;
    await inner.push('chat-a', 'e1');
    inner.failSends = true;
    await inner.push('chat-a', 's1');
    expect(outcomes).to.deep.equal([false, 'socket closed']);
    expect(await counter(metrics, 'wa_bot_messages_sent_total')).to.equal(0);
    expect(await counter(metrics, 'wa_bot_send_failures_total', { type: 'text' })).to.equal(1);
    expect(await counter(metrics, 'wa_bot_messages_answered_total')).to.equal(0);
    expect(await counter(metrics, 'wa_bot_messages_received_total')).to.equal(2);
  });

  it('passes the transport events (deleted for everyone, edits, new chat ids) and every other method through, `this` intact', async () => {
    const metrics = new BotMetrics();
    const inner = new ScriptedTransport();
    const wrapped = instrumentTransport(inner as unknown as Transport, metrics);
    const revoked: string[] = [];
    const events: TransportEvents = { onRevoke: (chatId, messageId) => void revoked.push(`${chatId}/${messageId}`) };
    await wrapped.start(async () => undefined, events);
    await inner.events?.onRevoke?.('chat-a', 'm1');
    expect(revoked).to.deep.equal(['chat-a/m1']);
    await wrapped.sendText('chat-b', 'hello');
    expect(wrapped.ownIds()).to.deep.equal(['own-id']);
    // Handed on as a callback (detached from the wrapper), a method still reaches its transport.
    const { ownIds } = wrapped;
    expect(ownIds()).to.deep.equal(['own-id']);
    expect(inner.sent).to.deep.equal(['chat-b: hello']);
    expect(wrapped.name).to.equal('scripted');
  });
});
