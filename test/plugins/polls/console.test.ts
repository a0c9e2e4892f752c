import { expect } from 'chai';
import { FakeModel, lastText } from '../../../app/testing/index.js';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { shippedExample, tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat as runChat } from '../../helpers/console-chat.js';

describe('polls on the console (the console chat in this process, fake model on 127.0.0.1)', function () {
  this.timeout(30_000);

  it('prints the poll with numbered options, and :vote reaches the model as the current sender', async () => {
    const model = await FakeModel.start((r) => {
      if (r.messages.at(-1)?.role === 'tool') return 'the poll is up';
      if (lastText(r) === 'make a pie poll') return { tool: 'send_poll', args: { question: 'Which pie?', options: ['kiwi pie', 'mango tart'], answer_on_vote: true } };
      return `model: ${lastText(r)}`;
    });
    try {
      const dir = await tempDir('polls-console-');
      await writeConfig(dir, { plugins: { polls: { enabled: true } } });
      const env = { API_KEY: 'test-key-123456', BASE_URL: model.url, MODEL: 'm' };
      const run = await runChat(':vote 1\nmake a pie poll\n:vote 3\n:vote 1,2\n:as 6281200000002\n:vote 2\n:as 10000000001\n:vote 2\n', { cwd: dir, env });
      expect(run.code, run.stderr).to.equal(0);
      const lines = run.lines;
      const at = lines.indexOf('bot [poll] Which pie?');
      expect(at, run.stdout).to.be.greaterThan(-1);
      expect(lines.slice(at + 1, at + 3)).to.deep.equal(['  1. kiwi pie', '  2. mango tart']);
      expect(lines).to.include('bot> the poll is up');
      expect(run.stderr).to.match(/that poll has options 1 to 2/);
      expect(run.stderr).to.match(/that poll takes one choice/);
      // `:as` changes the private chat too: the other person's chat has no poll to vote on.
      expect(run.stderr.match(/the bot has sent no poll in this chat/g)).to.have.length(2);
      expect(lines.filter((l) => l.includes('voted on the poll'))).to.deep.equal(['bot> model: user 10000000001 voted on the poll "Which pie?": mango tart']);
      expect(lastText(model.requests.at(-1)!)).to.equal('user 10000000001 voted on the poll "Which pie?": mango tart');

      // As shipped (pairing): the person at the terminal votes as the owner they are, never as a stranger.
      const shipped = await tempDir('polls-console-shipped-');
      await writeFile(path.join(shipped, 'config.json'), JSON.stringify({ ...(await shippedExample()), port: 0, plugins: { polls: { enabled: true } } }));
      const closed = await runChat('make a pie poll\n:vote 2\n', { cwd: shipped, env });
      expect(closed.code, closed.stderr).to.equal(0);
      expect(closed.stdout).to.not.match(/pairing code/i);
      expect(closed.lines.filter((l) => l.includes('voted on the poll'))).to.deep.equal(['bot> model: user 10000000001 voted on the poll "Which pie?": mango tart']);
    } finally {
      await model.close();
    }
  });
});
