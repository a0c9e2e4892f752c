import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { PassThrough } from 'node:stream';
import * as tar from 'tar';
import { createApp } from '../../../app/app.js';
import { MemoryTransport } from '../../../core/adapters/memory/memory-transport.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { ROOT, tempDir, writeConfig } from '../../helpers/checkout.js';

const run = promisify(execFile);
const ALICE = '62811000001@s.whatsapp.net';

/*
 * The documented way to ship a plugin that has a runtime dependency of its own
 * (docs/plugin-authors/installing-and-publishing.md, "A packed plugin with dependencies of its own"):
 * the dependency is bundled into the tarball (`bundleDependencies`), the plugin API is a peer dependency that the
 * bot's own node_modules satisfies, and the owner only unpacks the tarball into plugins.local/ — no `npm install`,
 * no registry, no path that breaks once the tarball is unpacked somewhere else.
 */

const DEPENDENCY_MANIFEST = { name: 'wa-test-shout', version: '1.2.0', type: 'module', exports: './index.js' };
const DEPENDENCY_SOURCE = `export const shout = (text) => text.toUpperCase() + '!';\n`;

const PLUGIN_MANIFEST = {
  name: 'wa-plugin-shouter',
  version: '1.0.0',
  type: 'module',
  exports: { '.': { import: './index.js' } },
  dependencies: { 'wa-test-shout': '^1.2.0' },
  bundleDependencies: ['wa-test-shout'],
  peerDependencies: { '@wa-assistant-bot/plugin-api': '>=0.1.0' },
  // What the author compiled against; written as the docs show, and meaningless once unpacked elsewhere.
  devDependencies: { '@wa-assistant-bot/plugin-api': 'file:../tarballs/wa-assistant-bot-plugin-api-0.1.0.tgz' },
};
const PLUGIN_SOURCE = `import { definePlugin } from '@wa-assistant-bot/plugin-api';
import { shout } from 'wa-test-shout';

export default definePlugin({
  name: 'shouter',
  description: 'Says things louder',
  setup: () => ({ commands: [{ command: 'shout', run: (ctx) => ctx.reply(shout(ctx.args)) }] }),
});
`;

describe('a packed plugin with a runtime dependency of its own, installed the documented way', function () {
  this.timeout(120_000);
  let work: string;
  before(async () => {
    work = await tempDir('packed-plugin-');
  });
  after(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('packs its dependency inside, unpacks into plugins.local/ with no install step, and answers through it', async () => {
    // The author's folder: the dependency installed in its node_modules (as `npm install wa-test-shout` leaves it).
    const authorDir = path.join(work, 'author', 'wa-plugin-shouter');
    await mkdir(path.join(authorDir, 'node_modules', 'wa-test-shout'), { recursive: true });
    await writeFile(path.join(authorDir, 'node_modules', 'wa-test-shout', 'package.json'), JSON.stringify(DEPENDENCY_MANIFEST));
    await writeFile(path.join(authorDir, 'node_modules', 'wa-test-shout', 'index.js'), DEPENDENCY_SOURCE);
    await writeFile(path.join(authorDir, 'package.json'), JSON.stringify(PLUGIN_MANIFEST, null, 2));
    await writeFile(path.join(authorDir, 'index.js'), PLUGIN_SOURCE);

    const { stdout } = await run('npm', ['pack', '--offline', '--json', '--pack-destination', work], { cwd: authorDir });
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }>; bundled: string[] }>;
    expect(packed!.bundled, 'the dependency travels inside the tarball').to.deep.equal(['wa-test-shout']);
    expect(packed!.files.map((f) => f.path)).to.include('node_modules/wa-test-shout/index.js');
    expect(packed!.files.some((f) => f.path.includes('plugin-api')), 'the API is not bundled: the bot provides it').to.equal(false);
    // The author's folder is gone before the owner installs: nothing may point back into it.
    await rm(path.join(work, 'author'), { recursive: true, force: true });

    // The owner's bot folder (its node_modules is the bot's, where npm ci linked the API package), and the documented
    // install: unpack into plugins.local/<name>, then enable it in config.json.
    const botDir = path.join(work, 'bot');
    await mkdir(path.join(botDir, 'plugins.local', 'shouter'), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules'), path.join(botDir, 'node_modules'), 'dir');
    await tar.x({ file: path.join(work, packed!.filename), cwd: path.join(botDir, 'plugins.local', 'shouter'), strip: 1 });
    await writeConfig(botDir, { access: { mode: 'everyone' }, plugins: { shouter: { enabled: true } } });

    const sink = new PassThrough();
    let log = '';
    sink.on('data', (d: Buffer) => (log += d.toString()));
    const app = await createApp({
      cwd: botDir,
      env: { PATH: process.env.PATH ?? '', API_KEY: 'sk-test', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' },
      logger: createLogger({ pretty: false, destination: sink }),
      skipHealthProbe: true,
    });
    const transport = new MemoryTransport();
    await app.connect(transport);
    try {
      expect(app.pluginFailures, log).to.deep.equal([]);
      const answers = await transport.push({ text: '.shout hello there', senderId: ALICE, chatId: ALICE });
      expect(answers.filter((a) => a.type === 'text').map((a) => (a as { text: string }).text)).to.deep.equal(['HELLO THERE!']);
    } finally {
      await app.stop();
    }
  });
});
