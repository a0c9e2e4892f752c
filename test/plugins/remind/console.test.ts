import { expect } from 'chai';
import path from 'node:path';
import { storedDocuments } from '../../helpers/disk-text.js';
import { filesUntil } from '../../helpers/files-until.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat as runChat, startConsoleChat } from '../../helpers/console-chat.js';

const ENV = { API_KEY: 'test-key-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' };

describe('remind on the console (the console chat in this process, input kept open, real clock)', function () {
  this.timeout(30_000);

  it('fires in the current chat, prints "bot [to <chat>]" for another, never keeps the chat alive, and fires late after a restart', async () => {
    const dir = await tempDir('remind-console-');
    await writeConfig(dir, { sending: { perChatPerMinute: 60, globalPerMinute: 60, jitterMs: 0 }, plugins: { remind: { enabled: true, timeZone: 'Asia/Jakarta' } } });

    const chat = startConsoleChat({ cwd: dir, env: ENV });
    await chat.waitForLog(/console chat ready/);
    chat.send('.remind 2s tea');
    await chat.waitForLine(/^bot> ⏰ Reminder set for \w{3} \d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)? \(Asia\/Jakarta\): tea$/);
    await chat.waitForLine(/^bot> ⏰ Reminder: tea$/);

    chat.send('.remind 2s for the first chat');
    await chat.waitForLine(/: for the first chat$/);
    chat.send(':as 6281200000002');
    await chat.waitForLine(/^bot \[to 10000000001@s\.whatsapp\.net\] ⏰ Reminder: for the first chat$/);

    // Still pending at end of input: the chat ends anyway and keeps it for the next start.
    chat.send(':as 10000000001');
    chat.send('.remind 3h still pending');
    await chat.waitForLine(/: still pending$/);
    expect(await chat.endInput()).to.equal(0);

    // Due in an hour: it cannot fall due while this chat starts, answers and stops, however slow the machine.
    const first = await runChat('.remind 1h after the restart\n', { cwd: dir, env: ENV });
    expect(first.code).to.equal(0);
    expect(first.lines).to.deep.include.members([first.lines.find((l) => /^bot> ⏰ Reminder set for .*: after the restart$/.test(l))!]);
    expect(first.lines.join('\n')).to.not.match(/Reminder: after the restart|late/);

    // The next start comes an hour and a minute later by its clock: the reminder fell due while the bot was down (the
    // one due in 3 h did not).
    const again = startConsoleChat({ cwd: dir, env: ENV, dateAheadMs: 61 * 60_000 });
    try {
      await again.waitForLine(/^bot> ⏰ Reminder, \d+ (?:s|min) late \(I was offline when it was due, \w{3} \d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)?\): after the restart$/);
      // Sent, then removed: the list is asked for once the removal is on disk (asked at once, it may still be there).
      await filesUntil(path.join(dir, 'data'), async () => !JSON.stringify(storedDocuments(path.join(dir, 'data'), 'remind', 'reminders')).includes('after the restart'), 'the sent reminder removed');
      again.send('.reminders');
      const list = await again.waitForLine(/^bot> Reminders in this chat/);
      expect(list).to.equal('bot> Reminders in this chat (times in Asia/Jakarta unless shown):');
      await again.waitForLine(/^ {2}1\. .* — still pending$/);
      expect(again.stdout()).to.not.match(/after the restart[\s\S]*after the restart/);
    } finally {
      expect(await again.endInput()).to.equal(0);
    }
  });
});
