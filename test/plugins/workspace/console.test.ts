import { expect } from 'chai';
import { completion, FakeGateway } from '../../fakes/openai-gateway.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat as runChat } from '../../helpers/console-chat.js';

describe('workspace in the console (the console chat in this process)', function () {
  this.timeout(30_000);

  it('opens a workspace, lets the model write a script, runs it with /ws run', async () => {
    const gw = await FakeGateway.start('gw');
    try {
      const dir = await tempDir();
      await writeConfig(dir, { plugins: { workspace: { timeLimitSeconds: 5 } } });
      gw.next(
        { status: 200, json: completion(null, { toolCalls: [{ id: 'c1', name: 'workspace_write_file', arguments: JSON.stringify({ path: 'hello.py', content: 'print("hello from the sandbox", 6 * 7)' }) }] }) },
        { status: 200, json: completion('I wrote hello.py. Run it with /ws run hello.py') },
      );
      const run = await runChat('/ws\nplease write hello.py\n/ws run hello.py\n/ws exit\n', {
        cwd: dir,
        env: { API_KEY: 'test-key-123456', BASE_URL: gw.url, MODEL: 'm' },
      });
      expect(run.code, run.stderr).to.equal(0);
      expect(run.lines).to.include('bot> 🧑‍💻 Your new workspace is open.');
      expect(run.lines).to.include('bot> I wrote hello.py. Run it with /ws run hello.py');
      const result = run.lines.findIndex((l) => l.startsWith('bot> ▶ hello.py:'));
      expect(result, run.stdout).to.be.greaterThan(-1);
      if (/sandbox does not work/.test(run.stdout)) {
        expect(run.lines[result]).to.match(/cannot run code/);
      } else {
        expect(run.lines[result]).to.match(/exit code 0/);
        expect(run.lines.slice(result)).to.include('  hello from the sandbox 42');
      }
      expect(run.lines.slice(-1)[0]).to.match(/Left the workspace/);
    } finally {
      await gw.close();
    }
  });
});
