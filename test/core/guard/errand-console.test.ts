import { expect } from 'chai';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat as runChat } from '../../helpers/console-chat.js';
import { UNPACED_SENDS } from '../../helpers/chat.js';

const DEAD_UPSTREAM = { API_KEY: 'x', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' };

describe('console: an errand approved with :react (the console chat in this process)', function () {
  this.timeout(30_000);
  it('.send holds it; :react 👍 on the bot\'s message sends it, printed as bot [to <chat>]', async () => {
    const dir = await tempDir();
    await writeConfig(dir, { sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 } });
    // The held errand goes out at once once approved: the approval is tested here, not the pace of sends.
    const run = await runChat(['.send 6281100000055 see you at 5', ':react 👍'].join('\n') + '\n', { cwd: dir, env: { ...DEAD_UPSTREAM }, sendPacing: UNPACED_SENDS });
    expect(run.code, run.stderr).to.equal(0);
    const sent = run.lines.indexOf('bot [to 6281100000055@s.whatsapp.net] see you at 5');
    expect(sent, run.lines.join('\n')).to.be.greaterThan(-1);
    const asked = run.lines.findIndex((l) => l.startsWith('bot> ⏳ Waiting for your OK'));
    expect(asked, 'the owner was asked before it went').to.be.within(0, sent - 1);
    expect(run.lines.some((l) => l.startsWith('bot> ✅ Sent to +6281100000055'))).to.equal(true);
  });
});
