import { expect } from 'chai';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createApp } from '../../app/app.js';
import { createLogger } from '../../core/services/log/logger.js';
import { completion, FakeGateway } from '../fakes/openai-gateway.js';
import { runCommand } from '../helpers/run-script.js';
import { tempDir } from '../helpers/checkout.js';

const KEY = 'sk-calm-start-key-0123456789';

describe('a calm first start', function () {
  this.timeout(120_000);

  it('after a set-up that declined every optional feature, the start log has no WARN line: the features are off in one info line', async () => {
    const gateway = await FakeGateway.start('calm', (req) => ({ status: 200, json: completion('hi', { model: req.json?.model }) }), { models: ['calm-model'] });
    const dir = await tempDir('wabot-calm-');
    try {
      // Set-up as an owner who says no to voice, search and the dashboard.
      await writeFile(path.join(dir, 'config.json'), JSON.stringify({ port: 0 }));
      const setup = await runCommand('setup', ['--base-url', `${gateway.url}/v1`, '--api-key', KEY, '--model', 'calm-model', '--owner', '15550100200', '--audio-keys', '', '--search-key', '', '--dashboard', 'off', '--yes'], { cwd: dir });
      expect(setup.code, setup.stderr).to.equal(0);
      // A current yt-dlp, so that this machine's programs are not what the test is about.
      const ytdlp = path.join(dir, 'yt-dlp');
      await writeFile(ytdlp, `#!/bin/sh\necho ${new Date().toISOString().slice(0, 10).replace(/-/g, '.')}\n`);
      await chmod(ytdlp, 0o755);

      const sink = new PassThrough();
      let out = '';
      sink.on('data', (d) => (out += d));
      const app = await createApp({ cwd: dir, env: { YTDLP_PATH: ytdlp }, logger: createLogger({ level: 'info', pretty: false, destination: sink }) });
      await app.healthChecked;
      await app.stop();
      const lines = out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: number; msg: string });
      expect(lines.filter((l) => l.level >= 40).map((l) => l.msg)).to.deep.equal([]);
      const off = lines.filter((l) => /^\s*off: /.test(l.msg));
      expect(off).to.have.length(1);
      expect(off[0].level).to.equal(30);
      expect(off[0].msg).to.match(/^ {2}off: (.+) — `npm run doctor` says how to turn them on$/);
      const named = /off: (.+) —/.exec(off[0].msg)![1].split(', ');
      expect(named).to.include.members(['voice', 'search', 'premium', 'imagine', 'mcp']);
      expect(lines.some((l) => /start check ✔ primary/.test(l.msg))).to.equal(true);
    } finally {
      await gateway.close();
    }
  });
});
