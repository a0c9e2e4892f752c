import { expect } from 'chai';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { CONSOLE_DEFAULT_SENDER } from '../../../core/adapters/console/console-transport.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { startLiveChat } from '../../helpers/live-chat.js';
import { runChat, tempDir, writeConfig } from '../../helpers/checkout.js';
import { storedSearchLogText } from '../../helpers/disk-text.js';

const CHAT = `${CONSOLE_DEFAULT_SENDER}@s.whatsapp.net`;

/** Every item of the chat's recall log in the store database, one JSON line each (empty when none exist yet). */
async function onDisk(dir: string): Promise<string> {
  return storedSearchLogText(path.join(dir, 'data'), 'recall', 'recall', CHAT);
}

/**
 * The recall log writes live lines once per data.flushIntervalMs, not per message (issue 24). What that must not cost:
 * a message found by search at once, every line on disk after a clean stop, and after a kill -9 the lines the crash
 * caught unwritten come back from the chat's history at the next start.
 */
describe('recall log: lines written in batches, nothing lost (spawned console, kill -9)', function () {
  this.timeout(60_000);
  let gateway: FakeGateway;
  let dir: string;
  beforeEach(async () => {
    gateway = await FakeGateway.start('gw');
    dir = await tempDir('recall-batch-');
  });
  afterEach(async () => {
    await gateway.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('after a kill -9 within the write interval, the next start adds the unwritten messages from the history, once', async () => {
    // A long interval: the answered messages are certainly not in the recall files when the process is killed.
    await writeConfig(dir, { data: { flushIntervalMs: 60_000 } });
    const env = { API_KEY: 'test-key-123456', BASE_URL: gateway.url, MODEL: 'm' };
    const chat = startLiveChat({ cwd: dir, env });
    try {
      await chat.waitForLog(/console chat ready/);
      chat.send('the locker code is marigold 4471');
      await chat.waitForLine(/^bot> gw: the locker code is marigold 4471$/);
      // Found at once, before any write: the search loads the chat and the pending line is written first.
      chat.send('.recall marigold');
      await chat.waitForLine(/^bot> 🔎 2 messages in this chat about "marigold"/);
      chat.send('the spare key is under the heron statue');
      await chat.waitForLine(/^bot> gw: the spare key is under the heron statue$/);
      expect(await onDisk(dir)).to.not.include('heron statue');
    } finally {
      chat.child.kill('SIGKILL');
      await chat.exited;
    }

    // The next start: the question and the answer come back from the history, and only once.
    const again = await runChat('.recall heron\n', { cwd: dir, env, timeoutMs: 20_000 });
    expect(again.code).to.equal(0);
    expect(again.lines.join('\n')).to.match(/🔎 2 messages[\s\S]*the spare key is under the heron statue/);
    const text = await onDisk(dir);
    expect(text.match(/the spare key is under the heron statue/g)).to.have.length(2);
    expect(text.match(/the locker code is marigold 4471/g)).to.have.length(2);
    expect(again.stderr).to.match(/2 message\(s\) the last run stopped before writing were added from the chat's history/);
  });

  it('a clean stop writes every pending line and leaves nothing to catch up on', async () => {
    await writeConfig(dir, { data: { flushIntervalMs: 60_000 } });
    const env = { API_KEY: 'test-key-123456', BASE_URL: gateway.url, MODEL: 'm' };
    const first = await runChat('the parcel goes to gate nine\n', { cwd: dir, env, timeoutMs: 20_000 });
    expect(first.code).to.equal(0);
    expect((await onDisk(dir)).match(/the parcel goes to gate nine/g)).to.have.length(2);
    const markerLeft = await readFile(path.join(dir, 'data', 'recall', '.running')).then(() => true, () => false);
    expect(markerLeft, 'the running marker is gone after a clean stop').to.equal(false);
    const again = await runChat('.recall parcel\n', { cwd: dir, env, timeoutMs: 20_000 });
    expect(again.stderr).to.not.match(/stopped before writing/);
    expect((await onDisk(dir)).match(/the parcel goes to gate nine/g)).to.have.length(2);
  });
});
