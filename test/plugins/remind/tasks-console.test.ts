import { expect } from 'chai';
import { FakeModel, lastText } from '../../../app/testing/index.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat as runChat, startConsoleChat, type ConsoleChat } from '../../helpers/console-chat.js';

async function ends(chat: ConsoleChat): Promise<void> {
  expect(await chat.endInput(), `the chat ends at end of input\n${chat.stderr()}`).to.equal(0);
}

describe('scheduled tasks on the console (the console chat in this process, fake model on 127.0.0.1, real clock)', function () {
  this.timeout(30_000);
  let model: FakeModel;
  before(async () => {
    model = await FakeModel.start((r) => `answer to: ${lastText(r)}\nsecond line`);
  });
  after(() => model.close());

  it('.schedule reaches the model at its time with tools and prints the answer; listed, cancelled; one due while down runs after the start', async () => {
    const dir = await tempDir('tasks-console-');
    const env = { API_KEY: 'test-key-123456', BASE_URL: model.url, MODEL: 'm' };
    await writeConfig(dir, { sending: { perChatPerMinute: 60, globalPerMinute: 60, jitterMs: 0 }, plugins: { remind: { enabled: true, timeZone: 'Asia/Jakarta' } } });

    const chat = startConsoleChat({ cwd: dir, env });
    try {
      await chat.waitForLog(/console chat ready/);
      chat.send('.schedule 2s what is on today');
      await chat.waitForLine(/^bot> 🗓️ Task scheduled for .* \(Asia\/Jakarta\); then I will answer: what is on today$/);
      expect(model.requests).to.have.length(0);
      const at = chat.lines().length;
      await chat.waitForLine(/^bot> 🗓️ Scheduled: what is on today$/, { from: at });
      await chat.waitForLine(/^ {2}answer to: what is on today$/, { from: at });
      await chat.waitForLine(/^ {2}second line$/, { from: at });
      expect(lastText(model.requests[0])).to.equal('what is on today');
      expect(model.requests[0].tools).to.include.members(['schedule_message', 'schedule_task']);

      chat.send('.schedule 1h the weekly summary');
      await chat.waitForLine(/then I will answer: the weekly summary$/);
      chat.send('.reminders');
      await chat.waitForLine(/^ {2}1\. .* — 🗓️ task: the weekly summary$/);
      chat.send('.cancel 1');
      await chat.waitForLine(/^bot> Cancelled: .* — 🗓️ task: the weekly summary$/);
      chat.send('.reminders');
      await chat.waitForLine(/^bot> No reminders in this chat/);
    } finally {
      await ends(chat);
    }

    // Due in an hour: it cannot fall due while this chat starts, answers and stops, however slow the machine.
    const first = await runChat('.schedule 1h the headlines\n', { cwd: dir, env });
    expect(first.code).to.equal(0);
    expect(first.stdout).to.match(/then I will answer: the headlines/);
    expect(first.stdout).to.not.match(/Scheduled.*the headlines/);
    const seen = model.requests.length;

    // The next start comes an hour and a minute later by its clock: the task fell due while the bot was down.
    const again = startConsoleChat({ cwd: dir, env, dateAheadMs: 61 * 60_000 });
    try {
      await again.waitForLine(/^bot> 🗓️ Scheduled, \d+ (?:s|min) late \(I was offline when it was due, .*\): the headlines$/);
      await again.waitForLine(/^ {2}answer to: the headlines$/);
      expect(model.requests.length).to.equal(seen + 1);
    } finally {
      await ends(again);
    }
  });
});
