import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { createLogger } from '../../../core/services/log/logger.js';
import { quietSignalConsole } from '../../../core/adapters/whatsapp/signal-console.js';
import { linkOnWire, type WireLink } from '../../helpers/wire-transport.js';

/** A session record as libsignal prints it: its private keys are what must never reach a log. */
const SECRET = 'c8b43485f7317a774d3e47dcf7d2909c';
const session = { currentRatchet: { ephemeralKeyPair: { privKey: Buffer.from(SECRET, 'hex') }, rootKey: Buffer.from(SECRET, 'hex') } };

function capture() {
  const lines: string[] = [];
  const sink = new PassThrough();
  sink.on('data', (c: Buffer) => lines.push(...c.toString().split('\n').filter(Boolean)));
  return { log: createLogger({ level: 'debug', pretty: false, destination: sink }), lines };
}

describe("libsignal's session lines never print a session's keys", () => {
  it('keeps its session lines to their words at debug, and lets every other console line through', () => {
    const printed: unknown[][] = [];
    const target = { info: (...a: unknown[]) => void printed.push(['info', ...a]), warn: (...a: unknown[]) => void printed.push(['warn', ...a]) };
    const { log, lines } = capture();
    const undo = quietSignalConsole(log, target);
    try {
      target.info('Closing session:', session);
      target.info('Opening session:', session);
      target.warn('Closing open session in favor of incoming prekey bundle');
      target.info('an ordinary line', 1);
      target.warn('a warning of someone else');
    } finally {
      undo();
    }
    expect(printed).to.deep.equal([['info', 'an ordinary line', 1], ['warn', 'a warning of someone else']]);
    expect(lines.map((l) => JSON.parse(l).line)).to.deep.equal(['Closing session:', 'Opening session:', 'Closing open session in favor of incoming prekey bundle']);
    expect(lines.join('\n')).to.not.include(Buffer.from(SECRET, 'hex').toString('base64')).and.not.include(SECRET);
    // Undone: the target's own methods are back.
    target.info('after');
    expect(printed.at(-1)).to.deep.equal(['info', 'after']);
  });

  describe('on the real socket (wire server)', function () {
    this.timeout(60_000);
    let l: WireLink | undefined;
    afterEach(async () => {
      await l?.stop();
      l = undefined;
    });

    it("a started transport routes libsignal's lines: a contact's session replaced on the bot's side prints no record, and logs no key", async () => {
      l = await linkOnWire();
      const written: string[] = [];
      const writes = { out: process.stdout.write, err: process.stderr.write };
      const spy = (original: typeof process.stdout.write) => function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
        written.push(String(chunk));
        return (original as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
      } as typeof process.stdout.write;
      process.stdout.write = spy(writes.out);
      process.stderr.write = spy(writes.err);
      try {
        // Ann writes first (a pre-key message), the bot answers on a session of its own making: libsignal closes one.
        const ann = l.server.person('15551230009', '155512300090001');
        await l.server.deliver(ann, { conversation: 'hi' });
        await l.until(() => l!.received.length === 1, 'her message');
        const sent = await l.transport.sendText(l.received[0].chatId, 'hello Ann');
        await l.server.waitForSent((s) => s.id === sent.id);
      } finally {
        process.stdout.write = writes.out;
        process.stderr.write = writes.err;
      }
      expect(l.logs().some((x) => x.line === 'Closing session:')).to.equal(true);
      expect(written.filter((w) => /SessionEntry|privKey|Closing session/.test(w))).to.deep.equal([]);
      expect(JSON.stringify(l.logs())).to.not.include('privKey');
    });
  });
});
