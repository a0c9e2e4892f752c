import { expect } from 'chai';
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createMp3Plugin } from '../../../plugins/mp3/index.js';
import workspacePlugin from '../../../plugins/workspace/index.js';
import { readOptions } from '../../../web/dashboard/option-form.js';
import { formToConfig } from '../../../web/dashboard/config-form.js';
import { tempDir } from '../../helpers/checkout.js';
import { login, startWebTest, TOKEN } from '../../web/web-helpers.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

/** A program that leaves a mark when anything runs it. */
async function markerProgram(dir: string): Promise<{ bin: string; ran: () => Promise<boolean> }> {
  const bin = path.join(dir, 'evil-program');
  const mark = path.join(dir, 'ran.txt');
  await writeFile(bin, `#!/bin/sh\necho "$@" >> "${mark}"\necho 2099.01.01\n`);
  await chmod(bin, 0o755);
  return { bin, ran: async () => Boolean(await readFile(mark, 'utf8').catch(() => '')) };
}

const texts = (actions: Array<{ type: string }>) => actions.filter((a) => a.type === 'text' || a.type === 'edit').map((a) => (a as unknown as { text: string }).text);

describe('settings that can run code or open a hole are .env-only', function () {
  this.timeout(30_000);
  let dir: string;
  let t: TestBot | undefined;
  beforeEach(async () => {
    dir = await tempDir('env-only-');
  });
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('an old config.json that still has them starts, warns naming each one, and ignores the values', async () => {
    const evil = await markerProgram(dir);
    const good = await markerProgram(await tempDir('env-only-good-'));
    t = await startTestBot([createMp3Plugin(), workspacePlugin], {
      env: { YTDLP_PATH: good.bin },
      // As an old install's config.json has them: the sections as written, nothing added.
      enableGiven: false,
      config: {
        plugins: {
          mp3: { ytdlpPath: evil.bin, allowPrivateHosts: true, progressIntervalMs: 0 },
          workspace: { unsafeNoSandbox: true, sandboxUid: 0, sandboxGid: 0, timeLimitSeconds: 5 },
        },
      },
    });
    const warning = t.logs().find((l) => /IGNORED/.test(String(l.msg)) && String(l.msg).includes('plugins.mp3.ytdlpPath'));
    expect(warning?.msg).to.include('plugins.mp3.ytdlpPath → YTDLP_PATH').and.include('plugins.mp3.allowPrivateHosts → MP3_ALLOW_PRIVATE_HOSTS');
    const ws = t.logs().find((l) => /IGNORED/.test(String(l.msg)) && String(l.msg).includes('plugins.workspace.'));
    expect(ws?.msg).to.include('plugins.workspace.unsafeNoSandbox → WORKSPACE_UNSAFE_NO_SANDBOX').and.include('plugins.workspace.sandboxUid → WORKSPACE_SANDBOX_UID').and.include('plugins.workspace.sandboxGid → WORKSPACE_SANDBOX_GID');
    // Ignored: the program never ran, the download guard is on, no DANGER line, the live config no longer has them.
    const refused = texts(await t.transport.push({ text: '.mp3 http://127.0.0.1:9/x' }));
    expect(refused.join('\n')).to.match(/local or private network address/);
    expect(await good.ran()).to.equal(true);
    expect(await evil.ran()).to.equal(false);
    expect(JSON.stringify(t.logs())).to.not.include('!!! DANGER');
    expect(t.app.config.plugins.mp3).to.not.have.property('ytdlpPath');
    expect(t.app.config.plugins.workspace).to.not.have.property('unsafeNoSandbox');
    // The other options in those sections still apply.
    expect(t.app.config.plugins.workspace).to.include({ timeLimitSeconds: 5 });
  });

  it('they work from the environment', async () => {
    const good = await markerProgram(dir);
    t = await startTestBot(createMp3Plugin(), { env: { YTDLP_PATH: good.bin, MP3_ALLOW_PRIVATE_HOSTS: 'true' }, enableGiven: false });
    expect(t.app.capabilities.status('ytdlp').detail).to.include('YTDLP_PATH');
    expect(await good.ran()).to.equal(true);
    expect(t.logs().some((l) => /MP3_ALLOW_PRIVATE_HOSTS is on/.test(String(l.msg)))).to.equal(true);
  });

  it('the dashboard cannot set them: neither a posted options object nor a field on the plugin\'s card reaches config.json', async () => {
    t = await startTestBot([createMp3Plugin(), workspacePlugin], { enableGiven: false });
    const plugins = t.app.bot.plugins().map((s) => s.plugin);
    const base = JSON.parse(await readFile(path.join(t.dir, 'config.json'), 'utf8'));
    const form = (name: string, options: Record<string, unknown>) =>
      new URLSearchParams({ prefix: '.', botName: 'Bot', host: '127.0.0.1', port: '0', 'access.mode': 'everyone', [`plugin:${name}:present`]: '1', [`plugin:${name}:options`]: JSON.stringify(options) });
    const mp3 = formToConfig(form('mp3', { ytdlpPath: '/bin/sh' }), base, plugins);
    expect(JSON.stringify(mp3.config.plugins?.mp3 ?? {})).to.not.include('ytdlpPath');
    const ws = formToConfig(form('workspace', { unsafeNoSandbox: true }), base, plugins);
    expect(JSON.stringify(ws.config.plugins?.workspace ?? {})).to.not.include('unsafeNoSandbox');
    // The plugin's card posts one field per option of its schema: these are not among them.
    const schemaOf = (name: string) => plugins.find((p) => p.name === name)!.optionsSchema as never;
    expect(readOptions(new URLSearchParams({ 'opt:ytdlpPath': '/bin/sh' }), schemaOf('mp3'), {}).values).to.deep.equal({});
    expect(readOptions(new URLSearchParams({ 'opt:unsafeNoSandbox': 'on', 'present:unsafeNoSandbox': '1' }), schemaOf('workspace'), {}).values).to.deep.equal({});
    expect(readOptions(new URLSearchParams({ 'opt:maxJobsTotal': '2' }), schemaOf('mp3'), {}).values).to.deep.equal({ maxJobsTotal: 2 });
  });

  it('the dashboard shows them read-only, with their values', async () => {
    const w = await startWebTest({ token: TOKEN, plugins: [createMp3Plugin(), workspacePlugin], env: { YTDLP_PATH: '/opt/tools/yt-dlp' } });
    try {
      const { page } = await login(w.port, TOKEN);
      const section = page.slice(page.indexOf('Set in .env only'));
      expect(section).to.include('YTDLP_PATH').and.include('/opt/tools/yt-dlp').and.include('WORKSPACE_UNSAFE_NO_SANDBOX');
      expect(page).to.not.match(/name="[^"]*(YTDLP_PATH|ytdlpPath|unsafeNoSandbox)/);
    } finally {
      await w.stop();
    }
  });
});
