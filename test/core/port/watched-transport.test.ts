import { expect } from 'chai';
import { InFlightByChat } from '../../../core/kernel/port/watched-transport.js';
import type { IncomingMessage } from '../../../core/kernel/port/message.js';

const message = (id: string, chatId: string): IncomingMessage => ({ id, chatId, senderId: chatId, isGroup: false, text: id, mentions: [], timestamp: 0 });

/** A handler that finishes when the test says so. */
function held(): { handle: () => Promise<void>; finish: () => void } {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { handle: () => done, finish };
}

describe('InFlightByChat: which message a send to a chat answers (the metrics and the answered-message events share it)', () => {
  it('gives the oldest message its chat is handling, then the next once it ended, and keeps chats apart', async () => {
    const inFlight = new InFlightByChat<{ id: string }>();
    const [a, b, c] = [held(), held(), held()];
    const first = inFlight.handle(message('m1', 'chat-1'), { id: 'm1' }, a.handle);
    const second = inFlight.handle(message('m2', 'chat-1'), { id: 'm2' }, b.handle);
    const other = inFlight.handle(message('m3', 'chat-2'), { id: 'm3' }, c.handle);
    expect(inFlight.oldest('chat-1')?.id).to.equal('m1');
    expect(inFlight.oldest('chat-2')?.id).to.equal('m3');
    expect(inFlight.oldest('chat-3')).to.equal(undefined);
    a.finish();
    await first;
    expect(inFlight.oldest('chat-1')?.id).to.equal('m2');
    b.finish();
    await second;
    expect(inFlight.oldest('chat-1')).to.equal(undefined);
    c.finish();
    await other;
    expect(inFlight.oldest('chat-2')).to.equal(undefined);
  });

  it('lets a message go when its handling throws, and passes the error on', async () => {
    const inFlight = new InFlightByChat<{ id: string }>();
    const failed = inFlight.handle(message('m1', 'chat-1'), { id: 'm1' }, async () => {
      throw new Error('handler broke');
    });
    await failed.then(
      () => expect.fail('expected the handler error'),
      (err: Error) => expect(err.message).to.equal('handler broke'),
    );
    expect(inFlight.oldest('chat-1')).to.equal(undefined);
  });
});
