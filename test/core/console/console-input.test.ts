import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { ConsoleTransport } from '../../../core/adapters/console/console-transport.js';
import type { IncomingMessage } from '../../../core/kernel/port/message.js';

/** Lets the event loop run a few turns (stream reads, readline's line events). */
const turns = async (n = 20) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A console on in-memory streams, handing each message to `onMessage`; returns it and its input. */
async function startConsole(onMessage: (message: IncomingMessage) => Promise<void>) {
  const input = new PassThrough();
  const output = new PassThrough();
  output.resume();
  const console = new ConsoleTransport({ input, output, errors: new PassThrough() });
  await console.start(onMessage);
  return { console, input };
}

describe('console transport: piped input', () => {
  it('reads no further ahead than a few lines while the bot is busy, and still handles every line in order', async () => {
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { console, input } = await startConsole(async (message) => {
      seen.push(message.text);
      await gate;
    });
    const total = 2000;
    // One write per line, as a slow producer (or a big file read in chunks) hands them over.
    for (let i = 0; i < total; i++) input.write(`line ${i}\n`);
    input.end();
    await turns();
    // The first line is being handled and the rest wait: the console stopped reading, the input keeps the rest.
    expect(seen).to.deep.equal(['line 0']);
    expect(input.isPaused(), 'the input was not paused').to.equal(true);
    expect(input.readableLength, 'the console read all of its input while busy').to.be.greaterThan(0);
    release();
    await console.done;
    expect(seen).to.have.length(total);
    expect(seen.every((text, i) => text === `line ${i}`)).to.equal(true);
  });

  it(':quit stops at once: the lines after it are not handled', async () => {
    const seen: string[] = [];
    const { console, input } = await startConsole(async (message) => void seen.push(message.text));
    input.end('one\ntwo\n:quit\nthree\n');
    await console.done;
    expect(seen).to.deep.equal(['one', 'two']);
  });

  it('hands each line over as typed: no carriage return, mentions only where an @ stands, commands still commands', async () => {
    const seen: IncomingMessage[] = [];
    const { console, input } = await startConsole(async (message) => void seen.push(message));
    input.end('windows line\r\n  a line with spaces \n@62811111111 hi and mail@62822222222.com\nno mention here\n:group team\nin the group\n');
    await console.done;
    expect(seen.map((m) => m.text)).to.deep.equal(['windows line', '  a line with spaces ', '@62811111111 hi and mail@62822222222.com', 'no mention here', 'in the group']);
    expect(seen.map((m) => m.mentions)).to.deep.equal([[], [], ['62811111111@s.whatsapp.net'], [], []]);
    expect(seen[4].chatId).to.equal('team@g.us');
    // A line handed over directly (not split by readline) loses a trailing carriage return too.
    await console.handleLine('typed on windows\r');
    expect(seen[5].text).to.equal('typed on windows');
  });
});
