import { expect } from 'chai';
import { InFlightByChat, withOverrides } from '../../../core/kernel/port/watched-transport.js';
import type { Transport } from '../../../core/kernel/port/transport.js';
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

  it('tells `ended` with the state before the handling settles, and stays right past a thousand chats', async () => {
    const inFlight = new InFlightByChat<{ id: string }>();
    const ended: string[] = [];
    const first = held();
    const waiting = inFlight.handle(message('m0', 'chat-0'), { id: 'm0' }, first.handle, (s) => ended.push(s.id));
    for (let i = 1; i <= 1500; i++) {
      await inFlight.handle(message(`m${i}`, `chat-${i}`), { id: `m${i}` }, async () => undefined, (s) => ended.push(s.id));
      expect(inFlight.oldest(`chat-${i}`)).to.equal(undefined);
    }
    expect(ended).to.have.length(1500);
    // The chat still in flight keeps its message through the clean-ups of the chats that ended.
    expect(inFlight.oldest('chat-0')?.id).to.equal('m0');
    const next = inFlight.handle(message('m-next', 'chat-0'), { id: 'm-next' }, async () => undefined);
    expect(inFlight.oldest('chat-0')?.id).to.equal('m0');
    first.finish();
    await waiting;
    expect(ended.at(-1)).to.equal('m0');
    await next;
    expect(inFlight.oldest('chat-0')).to.equal(undefined);
  });
});

describe('withOverrides: a transport with some methods replaced, everything else its own', () => {
  class Inner {
    readonly name = 'inner';
    sent: string[] = [];
    status = 'linked';
    async sendText(chatId: string, text: string) {
      this.sent.push(`${chatId}: ${text}`);
      return { id: 'x' };
    }
    session() {
      return { status: this.status };
    }
    ownIds() {
      return [`own-${this.name}`];
    }
  }

  it('passes reads, calls (this intact, detached too) and writes through, live: a method replaced or added later is the one called', async () => {
    const inner = new Inner();
    const calls: string[] = [];
    const wrapped = withOverrides(inner as unknown as Transport, { setTyping: async (chatId) => void calls.push(`typing ${chatId}`) }) as unknown as Inner & Transport & Record<string, unknown>;
    await wrapped.setTyping('c1', true);
    expect(calls).to.deep.equal(['typing c1']);
    await wrapped.sendText('c1', 'hi');
    expect(inner.sent).to.deep.equal(['c1: hi']);
    const { ownIds } = wrapped;
    expect(ownIds()).to.deep.equal(['own-inner']);
    expect(wrapped.session().status).to.equal('linked');
    inner.status = 'closed';
    expect(wrapped.session().status).to.equal('closed');
    (inner as unknown as { session: () => unknown }).session = () => ({ status: 'replaced' });
    expect(wrapped.session().status).to.equal('replaced');
    // An optional method the transport lacks reads as missing, until it has one.
    expect(wrapped.markRead).to.equal(undefined);
    (inner as unknown as { markRead: () => string }).markRead = function (this: Inner) {
      return `read by ${this.name}`;
    };
    expect((wrapped.markRead as unknown as () => string)()).to.equal('read by inner');
    (inner as unknown as Record<string, unknown>).later = function (this: Inner) {
      return this.sent.length;
    };
    expect((wrapped.later as () => number)()).to.equal(1);
    wrapped.status = 'set through the wrapper';
    expect(inner.status).to.equal('set through the wrapper');
    expect(wrapped).to.be.instanceOf(Inner);
  });
});
