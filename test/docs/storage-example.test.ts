import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { register } from 'tsx/esm/api';
import { discoverPlugins } from '../../core/kernel/plugin/discover.js';
import type { Plugin } from '../../core/kernel/plugin/spec.js';
import { MemoryTransport } from '../../core/adapters/memory/memory-transport.js';
import type { OutgoingMedia, SentMessage } from '../../core/kernel/port/message.js';
import mydata from '../../plugins/mydata/index.js';
import { ROOT, checkoutModulePackageJson, tempDir } from '../helpers/checkout.js';
import { startTestBot, type TestBot } from '../../app/testing/index.js';

/** Where plugin authors read about host.store. */
const STORAGE_PAGE = path.join('docs', 'plugin-authors', 'storage.md');
const ALICE = '6281100000001@s.whatsapp.net';

class KeepingTransport extends MemoryTransport {
  documents: string[] = [];
  override async sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage> {
    this.documents.push(await readFile(media.path, 'utf8'));
    return super.sendMedia(chatId, media);
  }
}

describe('docs: the example plugin of "Storage"', function () {
  this.timeout(60000);
  let dir: string;
  let plugins: Plugin[];
  let t: TestBot | undefined;
  let unregister: (() => Promise<void>) | undefined;

  before(async () => {
    dir = await tempDir('storage-example-');
    mkdirSync(path.join(dir, 'plugins', 'notes'), { recursive: true });
    symlinkSync(path.join(ROOT, 'core'), path.join(dir, 'core'));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    writeFileSync(path.join(dir, 'package.json'), checkoutModulePackageJson());
    const page = readFileSync(path.join(ROOT, STORAGE_PAGE), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(page)?.[1];
    if (!example) throw new Error(`${STORAGE_PAGE} needs the example plugin as its first \`\`\`ts block`);
    // As a plugin in this repository imports the entry (a package imports `wa-assistant-bot/plugin`).
    writeFileSync(path.join(dir, 'plugins', 'notes', 'index.ts'), example.replace("'wa-assistant-bot/plugin'", "'../../core/index.js'"));
    unregister = register();
  });
  after(async () => {
    await t?.stop();
    await unregister?.();
  });

  it("type-checks under the project's strict settings", () => {
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({ extends: path.join(ROOT, 'tsconfig.json'), compilerOptions: { noEmit: true, incremental: false, rootDir: dir, types: ['node'], typeRoots: [path.join(ROOT, 'node_modules', '@types')] }, include: ['plugins/**/*.ts'] }),
    );
    const result = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(dir, 'tsconfig.json')], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).to.equal('');
    expect(result.status).to.equal(0);
  });

  it('keeps notes over a restart and shows them in .mydata', async () => {
    const found = await discoverPlugins(path.join(dir, 'plugins'), [], dir);
    expect(found.failures).to.deep.equal([]);
    plugins = [mydata, ...found.plugins];
    const run = path.join(dir, 'run');
    mkdirSync(run);
    t = await startTestBot(plugins, { dir: run });
    expect((await t.transport.push({ text: '.note buy milk', senderId: ALICE, chatId: ALICE }))[0]).to.include({ text: 'Noted.' });
    const transport = new KeepingTransport();
    t = await t.restart({ transport });
    expect((await transport.push({ text: '.notes', senderId: ALICE, chatId: ALICE }))[0]).to.include({ text: 'buy milk' });
    await transport.push({ text: '.mydata', senderId: ALICE, chatId: ALICE });
    const section = JSON.parse(transport.documents[0]).notes;
    expect(section.notes[ALICE].map((n: { text: string }) => n.text)).to.deep.equal(['buy milk']);
    expect(section.said[ALICE].map((s: { text: string }) => s.text)).to.deep.equal(['buy milk']);
  });
});
