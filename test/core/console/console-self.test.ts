import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createApp } from '../../../app/app.js';
import { CONSOLE_BOT_ID, ConsoleTransport } from '../../../core/adapters/console/console-transport.js';
import { FakeModel } from '../../../app/testing/fake-model.js';

/** A console on in-memory streams over the real app, config.json `account.mode: "self-chat"`; resolves with stdout's lines. */
async function chat(lines: string): Promise<string[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'console-self-'));
  const model = await FakeModel.start();
  try {
    await writeFile(path.join(dir, 'config.json'), JSON.stringify({ account: { mode: 'self-chat' }, access: { mode: 'everyone' }, plugins: {} }));
    const app = await createApp({ cwd: dir, env: { PATH: process.env.PATH ?? '', API_KEY: 'k', BASE_URL: model.url, MODEL: 'test-model' }, logDestination: new PassThrough(), skipHealthProbe: true });
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = '';
    output.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const console = new ConsoleTransport({ input, output, errors: new PassThrough() });
    await app.connect(console);
    input.end(lines);
    await console.done;
    await app.bot.idle();
    await app.stop();
    return printed.split('\n').filter(Boolean);
  } finally {
    await model.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describe('console :self: the account\'s own "Message yourself" chat', function () {
  this.timeout(30_000);

  it('hands lines over as the account in its own chat, as the operator; :dm goes back', async () => {
    const seen: Array<{ chatId: string; senderId: string; fromOperator?: boolean }> = [];
    const input = new PassThrough();
    const console = new ConsoleTransport({ input, output: new PassThrough(), errors: new PassThrough() });
    await console.start(async (m) => void seen.push({ chatId: m.chatId, senderId: m.senderId, fromOperator: m.fromOperator }));
    input.end(':self\nnote to self\n:dm\nback\n');
    await console.done;
    const own = `${CONSOLE_BOT_ID}@s.whatsapp.net`;
    expect(seen).to.deep.equal([
      { chatId: own, senderId: own, fromOperator: true },
      { chatId: '10000000001@s.whatsapp.net', senderId: '10000000001@s.whatsapp.net', fromOperator: true },
    ]);
  });

  it('in self-chat mode the bot answers in the self-chat and stays quiet in the private chat', async () => {
    const out = await chat('hello from the dm\n:self\nhello from myself\n');
    expect(out).to.deep.equal(['bot> model: hello from myself']);
  });
});
