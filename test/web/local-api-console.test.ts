import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createApp } from '../../app/app.js';
import { FakeModel } from '../../app/testing/fake-model.js';
import { ConsoleTransport } from '../../core/adapters/console/console-transport.js';
import { parseScopes } from '../../core/services/automation/scopes.js';
import { startWebServer } from '../../web/server.js';
import { UNPACED_SENDS } from '../helpers/chat.js';

describe('the local API in the console (npm run chat runs the same web server)', function () {
  this.timeout(30_000);

  it("sends to the console's own chat and runs a prompt there as the person at the console", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'api-console-'));
    const model = await FakeModel.start();
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = '';
    output.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    try {
      await writeFile(path.join(dir, 'config.json'), JSON.stringify({ port: 0, access: { mode: 'everyone' }, plugins: {} }));
      // The API's messages go out at once, in order: where they go is tested here; their pace is safe-sending.test.ts's.
      const app = await createApp({ cwd: dir, env: { PATH: process.env.PATH ?? '', API_KEY: 'k', BASE_URL: model.url, MODEL: 'test-model' }, logDestination: new PassThrough(), skipHealthProbe: true, sendPacing: UNPACED_SENDS });
      const console = new ConsoleTransport({ input, output, errors: new PassThrough() });
      const web = await startWebServer(app, () => console);
      await app.connect(console);
      const me = console.operatorChatId();
      const { token } = app.automation.tokens.create('console', parseScopes(`send:${me},prompt:${me}`));
      const call = (route: string, body: unknown) =>
        fetch(`http://127.0.0.1:${web.port}${route}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));

      const sent = await call('/api/v1/messages', { to: me, text: 'The washing machine is done' });
      expect(sent.status, JSON.stringify(sent.json)).to.equal(200);
      const prompted = await call('/api/v1/prompts', { to: me, prompt: 'Write the daily report' });
      expect(prompted.status, JSON.stringify(prompted.json)).to.equal(200);
      expect(prompted.json.answer).to.equal('model: Write the daily report');

      input.end();
      await console.done;
      await app.bot.idle();
      await web.close();
      await app.stop();
      const lines = printed.split('\n').filter(Boolean);
      expect(lines).to.include('bot> The washing machine is done');
      expect(lines).to.include('bot> model: Write the daily report');
    } finally {
      await model.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
