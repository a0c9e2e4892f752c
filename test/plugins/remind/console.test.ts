import { expect } from 'chai';
import { startLiveChat, type LiveChat } from '../../helpers/live-chat.js';
import { runChat, tempDir, writeConfig } from '../../helpers/checkout.js';

const ENV = { API_KEY: 'test-key-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function exitsWithin(chat: LiveChat, ms: number): Promise<number | null> {
  const timeout = sleep(ms).then(() => 'still running' as const);
  const result = await Promise.race([chat.exited, timeout]);
  if (result === 'still running') {
    chat.child.kill('SIGKILL');
    throw new Error(`the console chat was kept alive at end of input\nstdout:\n${chat.stdout()}\nstderr:\n${chat.stderr()}`);
  }
  return result.code;
}

describe('remind on the console (spawned npm run chat, stdin kept open, real clock)', function () {
  this.timeout(40_000);

  it('fires in the current chat, prints "bot [to <chat>]" for another, never keeps the chat alive, and fires late after a restart', async () => {
    const dir = await tempDir('remind-console-');
    await writeConfig(dir, { sending: { perChatPerMinute: 60, globalPerMinute: 60, jitterMs: 0 }, plugins: { remind: { enabled: true, timeZone: 'Asia/Jakarta' } } });

    const chat = startLiveChat({ cwd: dir, env: ENV });
    await chat.waitForLog(/console chat ready/);
    chat.send('.remind 2s tea');
    await chat.waitForLine(/^bot> ⏰ Reminder set for \w{3} \d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)? \(Asia\/Jakarta\): tea$/);
    await chat.waitForLine(/^bot> ⏰ Reminder: tea$/);

    chat.send('.remind 2s for the first chat');
    await chat.waitForLine(/: for the first chat$/);
    chat.send(':as 6281200000002');
    await chat.waitForLine(/^bot \[to 10000000001@s\.whatsapp\.net\] ⏰ Reminder: for the first chat$/);

    // Still pending at end of input: the chat ends anyway (unref'd timers) and keeps it for the next start.
    chat.send(':as 10000000001');
    chat.send('.remind 1h still pending');
    await chat.waitForLine(/: still pending$/);
    chat.child.stdin.end();
    expect(await exitsWithin(chat, 10_000)).to.equal(0);

    const first = await runChat('.remind 2s after the restart\n', { cwd: dir, env: ENV, timeoutMs: 10_000 });
    expect(first.code).to.equal(0);
    expect(first.lines).to.deep.include.members([first.lines.find((l) => /^bot> ⏰ Reminder set for .*: after the restart$/.test(l))!]);
    expect(first.lines.join('\n')).to.not.match(/Reminder: after the restart|late/);
    await sleep(2500);

    const again = startLiveChat({ cwd: dir, env: ENV });
    try {
      await again.waitForLine(/^bot> ⏰ Reminder, \d+ s late \(I was offline when it was due, \w{3} \d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)?\): after the restart$/);
      again.send('.reminders');
      const list = await again.waitForLine(/^bot> Reminders in this chat/);
      expect(list).to.equal('bot> Reminders in this chat (times in Asia/Jakarta unless shown):');
      await again.waitForLine(/^ {2}1\. .* — still pending$/);
      expect(again.stdout()).to.not.match(/after the restart[\s\S]*after the restart/);
      again.child.stdin.end();
      expect(await exitsWithin(again, 10_000)).to.equal(0);
    } finally {
      again.child.kill('SIGKILL');
    }
  });
});
