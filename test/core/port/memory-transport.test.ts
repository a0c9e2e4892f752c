import { expect } from 'chai';
import { MemoryTransport } from '../../../core/adapters/memory/memory-transport.js';

/** A memory transport whose handler replies to each message once the test lets it finish. */
async function heldTransport(): Promise<{ transport: MemoryTransport; finish: (text: string) => void }> {
  const transport = new MemoryTransport();
  const waiting = new Map<string, () => void>();
  await transport.start(async (message) => {
    await new Promise<void>((resolve) => waiting.set(message.text, resolve));
    await transport.sendText(message.chatId, `re: ${message.text}`);
  });
  return { transport, finish: (text) => waiting.get(text)!() };
}

describe('MemoryTransport: push and deliver (tests and the bench hand the bot messages through it)', () => {
  it('push resolves with the actions taken while its message was handled, deliver once it was handled, the actions kept in `actions`', async () => {
    const { transport, finish } = await heldTransport();
    const pushed = transport.push({ chatId: 'a@s.whatsapp.net', text: 'one' });
    let delivered = false;
    const delivering = transport.deliver({ chatId: 'b@s.whatsapp.net', text: 'two' }).then(() => (delivered = true));
    finish('one');
    expect((await pushed).map((a) => a.type === 'text' && a.text)).to.deep.equal(['re: one']);
    expect(delivered, 'deliver waits for the handling').to.equal(false);
    finish('two');
    await delivering;
    expect(transport.texts()).to.deep.equal(['re: one', 're: two']);
  });

  it('deliver refuses before the bot started, in words', async () => {
    const transport = new MemoryTransport();
    let error: Error | undefined;
    await transport.deliver({ text: 'hi' }).catch((err: Error) => (error = err));
    expect(error?.message).to.match(/start the bot with this transport/);
  });
});
