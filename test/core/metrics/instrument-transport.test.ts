import { expect } from 'chai';
import { BotMetrics } from '../../../core/services/metrics/bot-metrics.js';
import { instrumentTransport } from '../../../core/services/metrics/instrument-transport.js';
import type { IncomingMessage } from '../../../core/kernel/port/message.js';
import type { InboundHandler, Transport } from '../../../core/kernel/port/transport.js';

/** A transport that only delivers what the test pushes and records nothing: the metrics are what is checked. */
function pushTransport() {
  let handler: InboundHandler | undefined;
  const transport = {
    start: async (onMessage: InboundHandler) => void (handler = onMessage),
    sendText: async () => ({ id: 'sent' }),
  } as unknown as Transport;
  const push = (chatId: string, id: string, kind?: 'voice') =>
    handler!({ id, chatId, senderId: chatId, text: id, timestamp: Date.now(), isGroup: false, ...(kind ? { media: { kind } } : {}) } as IncomingMessage);
  return { transport, push };
}

async function counter(metrics: BotMetrics, name: string, kind?: string): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values ?? []).filter((v) => !kind || v.labels.kind === kind).reduce((sum, v) => sum + Number(v.value), 0);
}

describe('metrics: which inbound messages count as answered', () => {
  it('a send counts only for the message of its own chat that is being handled, even with other chats in flight', async () => {
    const metrics = new BotMetrics();
    const { transport, push } = pushTransport();
    const wrapped = instrumentTransport(transport, metrics);
    const releases = new Map<string, () => void>();
    // Like the bot: one chat's messages one after another, chats in parallel; a message answers when released.
    const chains = new Map<string, Promise<void>>();
    await wrapped.start((message) => {
      const previous = chains.get(message.chatId) ?? Promise.resolve();
      const mine = previous.then(() => new Promise<void>((resolve) => releases.set(message.id, resolve)));
      chains.set(message.chatId, mine);
      return mine;
    });

    const a1 = push('chat-a', 'a1');
    const a2 = push('chat-a', 'a2', 'voice');
    const b1 = push('chat-b', 'b1');
    await new Promise((r) => setImmediate(r));
    // b1 is answered while a1 and a2 are still in flight; a1 is answered; a2 never gets anything.
    await wrapped.sendText('chat-b', 'answer to b1');
    releases.get('b1')!();
    await b1;
    await wrapped.sendText('chat-a', 'answer to a1');
    releases.get('a1')!();
    await a1;
    await new Promise((r) => setImmediate(r));
    releases.get('a2')!();
    await a2;
    // A send to a chat with nothing in flight (a reminder, say) answers no message.
    await wrapped.sendText('chat-c', 'a reminder');

    expect(await counter(metrics, 'wa_bot_messages_received_total')).to.equal(3);
    expect(await counter(metrics, 'wa_bot_messages_answered_total', 'text')).to.equal(2);
    expect(await counter(metrics, 'wa_bot_messages_answered_total', 'voice')).to.equal(0);
    expect(await counter(metrics, 'wa_bot_messages_sent_total')).to.equal(3);
    expect(await counter(metrics, 'wa_bot_queue_depth')).to.equal(0);
  });
});
