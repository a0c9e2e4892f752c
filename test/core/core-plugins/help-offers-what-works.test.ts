import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat as runChat } from '../../helpers/console-chat.js';

const ENV = { API_KEY: 'k-help-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm', STARTUP_PROBE: 'off' };

/** The bot's answers on stdout (`bot> ` and its indented continuation lines), one string each. */
function answers(stdout: string): string[] {
  return stdout
    .split(/^bot> /m)
    .slice(1)
    .map((a) => a.replace(/\n {2}/g, '\n').trimEnd());
}

describe('.help offers only what works here (the console chat in this process)', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir();
    await writeConfig(dir);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('without audio keys: voice commands are not listed; one line says they are off and why, with the fix for the owner only', async () => {
    const run = await runChat('.help\n:as 4915550001\n.help\n', { cwd: dir, env: ENV });
    expect(run.code).to.equal(0);
    const [owner, stranger] = answers(run.stdout);
    for (const help of [owner, stranger]) {
      const listed = help.split('\n').filter((l) => /^\.\w+/.test(l));
      expect(listed.some((l) => l.startsWith('.ping'))).to.equal(true);
      expect(listed.some((l) => /^\.(vn|voice)\b/.test(l))).to.equal(false);
      expect(help).to.match(/\nOff here: .*\.vn, \.voice, voice\/audio \(no audio key is configured/);
    }
    expect(owner).to.include('fix: add audio keys: AUDIO_API_KEYS in .env (npm run setup)');
    expect(stranger).not.to.include('fix:');
  });

  it('with an audio key the voice commands are listed and not said to be off', async () => {
    const run = await runChat('.help\n', { cwd: dir, env: { ...ENV, AUDIO_API_KEYS: 'gsk_help_key_1234', AUDIO_BASE_URL: 'http://127.0.0.1:9' } });
    expect(run.code).to.equal(0);
    const [help] = answers(run.stdout);
    expect(help.split('\n').some((l) => l.startsWith('.vn'))).to.equal(true);
    expect(help).not.to.match(/Off here: .*\.vn/);
  });
});
