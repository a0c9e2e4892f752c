import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { createLogger } from '../../../core/services/log/logger.js';
import { ChatQueue } from '../../../core/kernel/pipeline/chat-queue.js';

/** A logger whose JSON lines are kept, to see what the queue said. */
function keptLog() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new PassThrough();
  destination.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  return { log: createLogger({ destination, pretty: false, level: 'info' }), lines };
}

/** Resolves with true when `promise` has settled by the next turn of the event loop, false when it is still pending. */
const settlesAtOnce = (promise: Promise<unknown>) => Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]);

describe('chat queue', () => {
  it('a failing message is logged, the chat goes on in order, and the queue still goes idle', async () => {
    const { log, lines } = keptLog();
    const queue = new ChatQueue(log);
    const ran: string[] = [];
    const first = queue.push('chat-a', async () => {
      ran.push('first');
      throw new Error('handler broke');
    });
    // A job that throws before it returns a promise is a failure like any other.
    const second = queue.push('chat-a', () => {
      ran.push('second');
      throw new Error('thrown at once');
    });
    const third = queue.push('chat-a', async () => void ran.push('third'));
    await Promise.all([first, second, third]);
    expect(ran).to.deep.equal(['first', 'second', 'third']);
    expect(await settlesAtOnce(queue.idle()), 'idle() never resolved after failed messages').to.equal(true);
    await new Promise((resolve) => setImmediate(resolve));
    const failures = lines.filter((l) => l.msg === 'message handling failed');
    expect(failures.map((l) => (l.err as { message: string }).message)).to.deep.equal(['handler broke', 'thrown at once']);
    expect(failures.every((l) => l.chat === 'chat-a')).to.equal(true);
  });

  it('keeps one chat in order while another chat runs beside it, and drains to 0 unfinished', async () => {
    const { log } = keptLog();
    const queue = new ChatQueue(log);
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    void queue.push('slow', async () => {
      await gate;
      order.push('slow-1');
    });
    void queue.push('slow', async () => void order.push('slow-2'));
    await queue.push('fast', async () => void order.push('fast-1'));
    expect(order).to.deep.equal(['fast-1']);
    release();
    expect(await queue.drain(1000)).to.equal(0);
    expect(order).to.deep.equal(['fast-1', 'slow-1', 'slow-2']);
  });
});
