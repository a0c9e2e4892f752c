import { expect } from 'chai';
import { storedHistory } from '../../helpers/disk-text.js';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as tar from 'tar';
import { acquireInstanceLock } from '../../../core/services/lifecycle/instance-lock.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { ROOT, tempDir } from '../../helpers/checkout.js';
import { runToExit, type ProcessRun } from '../../helpers/run-to-exit.js';
import { runCommand } from '../../helpers/run-script.js';
import { startTestBot } from '../../../app/testing/index.js';
import { storedDocuments, storedSearchLogText } from '../../helpers/disk-text.js';

/**
 * `node dist/cli/<script>` in `cwd`, with PATH only: the backup and the restore run as their own processes once each
 * (their exit codes and output); the other tests run the same commands in this process (`runCommand`).
 */
function runCli(script: string, args: string[], cwd: string): Promise<ProcessRun> {
  return runToExit(script, process.execPath, [path.join(ROOT, 'dist', 'cli', script), ...args], { cwd, env: { PATH: process.env.PATH ?? '' }, timeoutMs: 60_000 });
}

async function jsonFiles(dir: string): Promise<string[]> {
  const names = (await readdir(dir, { recursive: true })) as string[];
  return names.filter((n) => n.endsWith('.json')).map((n) => path.join(dir, n));
}

describe('backup and restore', function () {
  this.timeout(30000);
  let gw: FakeGateway;
  let dirs: string[] = [];
  const dir = async () => {
    const d = await tempDir();
    dirs.push(d);
    return d;
  };
  before(async () => {
    gw = await FakeGateway.start('primary');
  });
  after(() => gw.close());
  afterEach(async () => {
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    dirs = [];
  });

  it('a backup taken under a burst of messages restores with every file whole and every answered message present', async () => {
    const home = await dir();
    const t = await startTestBot('bundled', { dir: home, env: { API_KEY: 'test-key-123456', BASE_URL: `${gw.url}/v1`, MODEL: 'm' } });
    const chats = ['10000000011@s.whatsapp.net', '10000000012@s.whatsapp.net', '10000000013@s.whatsapp.net'];
    const answered: string[] = [];
    let backupStarted = false;
    let fifteenAnswered!: () => void;
    const underWay = new Promise<void>((resolve) => (fifteenAnswered = resolve));
    const burst = (async () => {
      for (let round = 0; round < 40 || !backupStarted; round++) {
        await Promise.all(
          chats.map(async (chat, i) => {
            const text = `burst ${round}-${i}`;
            const actions = await t.transport.push({ senderId: chat, text });
            if (actions.some((a) => a.type === 'text' && a.text === `primary: ${text}`)) if (answered.push(`${chat}|${text}`) === 15) fifteenAnswered();
          }),
        );
        if (round > 200) break;
      }
    })();
    // The backup starts once the burst is well under way (15 answers), and the burst goes on while it copies.
    await Promise.race([underWay, burst]);
    const answeredBefore = [...answered];
    backupStarted = true;
    const out = path.join(await dir(), 'nightly.tar.gz');
    const backup = await runCommand('backup', [out], { cwd: home });
    await burst;
    await t.stop();
    expect(backup.code, backup.stderr).to.equal(0);
    expect(backup.stdout).to.include('taken from the running bot');
    expect((await stat(out)).mode & 0o777).to.equal(0o600);

    const entries: string[] = [];
    await tar.list({ file: out, onReadEntry: (e) => entries.push(e.path) });
    expect(entries[0]).to.equal('backup-manifest.json');
    expect(entries.some((e) => e.includes('.control') || e.includes('.tmp-'))).to.equal(false);

    const target = await dir();
    await mkdir(path.join(target, 'data'));
    await writeFile(path.join(target, 'data', 'old-marker.txt'), 'the data that was here');
    const restore = await runCommand('restore', [out], { cwd: target });
    expect(restore.code, restore.stderr).to.equal(0);
    for (const file of await jsonFiles(path.join(target, 'data'))) JSON.parse(await readFile(file, 'utf8'));
    for (const key of answeredBefore) {
      const [chat, text] = key.split('|');
      const texts = storedHistory(path.join(target, 'data'), chat).map((m) => m.text);
      expect(texts, key).to.include(text).and.include(`primary: ${text}`);
    }
    // The counters came back with the store database: the usage of the answers taken before the backup.
    const usage = storedDocuments(path.join(target, 'data'), 'core', 'usage')[''] as any;
    expect(usage.version).to.equal(1);
    expect(usage.totals.main).to.be.at.least(answeredBefore.length);
    // The replaced data is kept aside, not lost.
    const aside = (await readdir(target)).filter((n) => n.startsWith('data.replaced-'));
    expect(aside).to.have.length(1);
    expect(await readFile(path.join(target, aside[0], 'old-marker.txt'), 'utf8')).to.equal('the data that was here');
  });

  it('a backup from the running bot holds the recall lines it had not written yet (they are written once a second)', async () => {
    const home = await dir();
    // A long interval: without the flush the backup asks for, the lines would still be in memory.
    const t = await startTestBot('bundled', { dir: home, env: { API_KEY: 'test-key-123456', BASE_URL: `${gw.url}/v1`, MODEL: 'm' }, config: { data: { flushIntervalMs: 60_000, diskLowMb: 200 } } });
    try {
      await t.transport.push({ senderId: '10000000021@s.whatsapp.net', text: 'the boat leaves from pier seventeen' });
      const out = path.join(await dir(), 'recall.tar.gz');
      const backup = await runCommand('backup', [out], { cwd: home });
      expect(backup.code, backup.stderr).to.equal(0);
      const target = await dir();
      const restore = await runCommand('restore', [out], { cwd: target });
      expect(restore.code, restore.stderr).to.equal(0);
      const lines = storedSearchLogText(path.join(target, 'data'), 'recall', 'recall', '10000000021@s.whatsapp.net');
      expect(lines.match(/the boat leaves from pier seventeen/g)).to.have.length(2);
    } finally {
      await t.stop();
    }
  });

  it('without a running bot the backup copies directly; the default archive goes beside DATA_DIR, never inside', async () => {
    const home = await dir();
    await mkdir(path.join(home, 'data', 'memory'), { recursive: true });
    await writeFile(path.join(home, 'data', 'memory', 'a.json'), '{"version":1,"facts":[]}');
    const backup = await runCli('backup.js', [], home);
    expect(backup.code, backup.stderr).to.equal(0);
    expect(backup.stdout).to.include('no bot was running');
    const made = await readdir(path.join(home, 'backups'));
    expect(made.filter((n) => n.endsWith('.tar.gz'))).to.have.length(1);
    expect(made.filter((n) => n.startsWith('.backup-staging'))).to.deep.equal([]);
    const inside = await runCli('backup.js', [path.join(home, 'data', 'x.tar.gz')], home);
    expect(inside.code).to.equal(1);
    expect(inside.stderr).to.match(/inside the data folder/);
  });

  it('restore is refused while a bot holds the data folder, and leaves the data untouched', async () => {
    const home = await dir();
    await mkdir(path.join(home, 'data'), { recursive: true });
    await writeFile(path.join(home, 'data', 'budgets.json'), '{"version":1,"day":"2026-01-01","tokens":{},"premiumTokens":{}}');
    const out = path.join(await dir(), 'b.tar.gz');
    expect((await runCommand('backup', [out], { cwd: home })).code).to.equal(0);
    await writeFile(path.join(home, 'data', 'budgets.json'), '{"version":1,"day":"2026-02-02","tokens":{},"premiumTokens":{}}');
    const release = await acquireInstanceLock(path.join(home, 'data'));
    try {
      const restore = await runCli('restore.js', [out], home);
      expect(restore.code).to.equal(1);
      expect(restore.stderr).to.include(`pid ${process.pid}`).and.include('stop it first');
      expect(await readFile(path.join(home, 'data', 'budgets.json'), 'utf8')).to.include('2026-02-02');
      expect((await readdir(home)).filter((n) => n.includes('.restore-') || n.includes('.replaced-'))).to.deep.equal([]);
    } finally {
      await release();
    }
  });

  it('names the data file kinds plugins declare in the manifest, and refuses to restore a newer version of one', async () => {
    const home = await dir();
    await mkdir(path.join(home, 'data'), { recursive: true });
    await writeFile(path.join(home, 'data', 'budgets.json'), '{"version":1,"day":"2026-01-01","tokens":{},"premiumTokens":{}}');
    const out = path.join(await dir(), 'b.tar.gz');
    expect((await runCommand('backup', [out], { cwd: home })).code).to.equal(0);
    const unpacked = await dir();
    await tar.extract({ file: out, cwd: unpacked });
    const manifest = JSON.parse(await readFile(path.join(unpacked, 'backup-manifest.json'), 'utf8'));
    // The core's kinds and those of plugins/workspace, plugins/voice and plugins/remind (declared in their stores).
    expect(manifest.schemas).to.include({ 'chat history': 1, 'workspace users': 1, 'workspace usernames': 1, 'workspace index': 1, 'voice archive segment': 1, 'audio budget': 1, 'voice reply choices': 1, reminders: 1, 'reminder time zones': 1 });

    manifest.schemas['workspace index'] = 99;
    await writeFile(path.join(unpacked, 'backup-manifest.json'), JSON.stringify(manifest));
    const newer = path.join(unpacked, 'newer.tar.gz');
    await tar.create({ gzip: true, file: newer, cwd: unpacked }, ['backup-manifest.json', 'data']);
    const target = await dir();
    const restore = await runCommand('restore', [newer], { cwd: target });
    expect(restore.code).to.equal(1);
    expect(restore.stderr).to.include('newer version of the bot (workspace index v99');
    expect(await readdir(target)).to.deep.equal([]);
  });

  it('names the data file kinds of a plugin package listed in config.json pluginPackages in the manifest', async () => {
    const home = await dir();
    const pkg = path.join(home, 'node_modules', 'wa-plugin-dice');
    await mkdir(pkg, { recursive: true });
    await writeFile(path.join(pkg, 'package.json'), JSON.stringify({ name: 'wa-plugin-dice', type: 'module', main: 'index.js' }));
    const publicEntry = pathToFileURL(path.join(ROOT, 'dist', 'core', 'index.js')).href;
    await writeFile(
      path.join(pkg, 'index.js'),
      `import { definePlugin, Store, Type } from ${JSON.stringify(publicEntry)};\n` +
        "export default definePlugin({ name: 'dice', description: 'keeps roll statistics', stores: [Store.doc('stats', Type.Object({}), () => ({}), { path: 'dice/stats.json', title: 'dice stats', version: 3 })], setup: () => ({}) });\n",
    );
    await writeFile(path.join(home, 'config.json'), JSON.stringify({ pluginPackages: ['wa-plugin-dice'] }));
    await mkdir(path.join(home, 'data', 'dice'), { recursive: true });
    await writeFile(path.join(home, 'data', 'dice', 'stats.json'), '{"version":3}');
    const out = path.join(await dir(), 'b.tar.gz');
    const backup = await runCommand('backup', [out], { cwd: home });
    expect(backup.code, backup.stderr).to.equal(0);
    const unpacked = await dir();
    await tar.extract({ file: out, cwd: unpacked });
    const manifest = JSON.parse(await readFile(path.join(unpacked, 'backup-manifest.json'), 'utf8'));
    expect(manifest.schemas).to.include({ 'dice stats': 3, reminders: 1 });
  });

  it('restore refuses an archive whose files do not match the manifest', async () => {
    const staging = await dir();
    await mkdir(path.join(staging, 'data'));
    await writeFile(path.join(staging, 'data', 'usage.json'), 'tampered');
    await writeFile(
      path.join(staging, 'backup-manifest.json'),
      JSON.stringify({ format: 'wa-assistant-backup', formatVersion: 1, createdAt: 'x', appVersion: '0', schemas: {}, files: [{ path: 'usage.json', size: 8, sha256: '0'.repeat(64) }] }),
    );
    const out = path.join(staging, 'bad.tar.gz');
    await tar.create({ gzip: true, file: out, cwd: staging }, ['backup-manifest.json', 'data']);
    const home = await dir();
    const restore = await runCommand('restore', [out], { cwd: home });
    expect(restore.code).to.equal(1);
    expect(restore.stderr).to.match(/usage\.json does not match its checksum/);
    expect(await readdir(home)).to.deep.equal([]);
  });
});
