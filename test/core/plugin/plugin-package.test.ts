import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { PassThrough } from 'node:stream';
import * as tar from 'tar';
import { createApp } from '../../../app/app.js';
import { MemoryTransport } from '../../../core/adapters/memory/memory-transport.js';
import type { OutgoingMedia, SentMessage } from '../../../core/index.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { ROOT, tempDir, writeConfig } from '../../helpers/checkout.js';

const run = promisify(execFile);
const ALICE = '62811000001@s.whatsapp.net';
const BOB = '62811000002@s.whatsapp.net';

/*
 * The done-when test of a plugin in its own folder: written outside the repository against the PACKED
 * @wa-assistant-bot/plugin-api (npm pack of packages/plugin-api, unpacked into the plugin's node_modules — its
 * dependencies linked from the bot's node_modules: no network), with per-chat data through host.store and a test of
 * its own through the public kit (wa-assistant-bot/testing); compiled by tsc with strict + noUncheckedIndexedAccess
 * (zero errors, library files checked too); then installed into a bot by a symlink in plugins.local/ and used by a
 * chat on the memory transport, whose .mydata export shows its data.
 */

const PLUGIN_SOURCE = `import { definePlugin, safeFileName, Store, Type } from '@wa-assistant-bot/plugin-api';
import { isIP } from 'node:net';
import { isPrivateAddress } from '@wa-assistant-bot/plugin-api/media';

const Jot = Type.Object({ text: Type.String(), by: Type.String(), messageId: Type.Optional(Type.String()) });

/** One document per chat: the chat's jots. */
export const JOTS = Store.chatDoc('jots', Type.Object({ items: Type.Array(Jot) }), () => ({ items: [] }), {
  people: { items: (doc) => doc.items, author: (jot) => jot.by, messageId: (jot) => jot.messageId },
});

export default definePlugin({
  name: 'jotter',
  description: 'Keeps short jots per chat',
  options: Type.Object({ maxJots: Type.Integer({ minimum: 1, default: 50 }) }),
  stores: [JOTS],
  setup: (host) => ({
    commands: [
      {
        command: 'jot',
        usage: '.jot <text>',
        run: async (ctx) => {
          if (isIP(ctx.args.trim()) && isPrivateAddress(ctx.args.trim())) return ctx.reply('That is a private network address; not jotted.');
          const doc = host.store.chat(ctx.chatId).doc(JOTS);
          if ((await doc.get()).items.length >= host.options().maxJots) return ctx.reply('This chat has all the jots it can keep.');
          await doc.save((d) => void d.items.push({ text: ctx.args, by: ctx.senderId, messageId: ctx.message.id }));
          await ctx.reply('Jotted.');
        },
      },
      {
        command: 'jotfile',
        run: (ctx) => ctx.reply('jots would be saved as ' + safeFileName(ctx.args) + '.txt'),
      },
      {
        command: 'jots',
        run: async (ctx) => {
          const items = (await host.store.chat(ctx.chatId).doc(JOTS).get()).items;
          const first = items[0]; // JotItem | undefined under noUncheckedIndexedAccess
          await ctx.reply(first ? items.length + ' jots, first: ' + first.text : 'no jots');
        },
      },
    ],
  }),
});
`;

const PLUGIN_TEST = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestBot } from 'wa-assistant-bot/testing';
import jotter from '../src/index.js';

test('jots are kept per chat', async () => {
  const bot = await startTestBot(jotter, { options: { maxJots: 2 } });
  try {
    assert.deepEqual(await bot.send('.jot buy milk'), ['Jotted.']);
    assert.deepEqual(await bot.send({ text: '.jots', chatId: 'other@s.whatsapp.net', senderId: 'other@s.whatsapp.net' }), ['no jots']);
    await bot.send('.jot call mum');
    assert.deepEqual(await bot.send('.jot one too many'), ['This chat has all the jots it can keep.']);
    assert.deepEqual(await bot.send('.jots'), ['2 jots, first: buy milk']);
  } finally {
    await bot.stop();
  }
});
`;

/** A plugin author's tsconfig: strict, noUncheckedIndexedAccess, and library files checked (skipLibCheck off). */
const PLUGIN_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: false,
    skipLibCheck: false,
    declaration: true,
    rootDir: '.',
    outDir: 'dist',
    types: ['node'],
  },
  include: ['src/**/*.ts', 'test/**/*.ts'],
};

/** Links a package of the bot's node_modules into `dir`/node_modules (its own dependencies resolve from its real path). */
async function linkFromBot(dir: string, name: string): Promise<void> {
  const target = path.join(dir, 'node_modules', name);
  await mkdir(path.dirname(target), { recursive: true });
  await symlink(path.join(ROOT, 'node_modules', name), target, 'dir');
}

/** What `npm pack --json` says of the tarball it wrote: its file name and the files it holds. */
interface Packed {
  filename: string;
  files: Array<{ path: string }>;
}

/** Packs packages/plugin-api with npm (offline) into `packDir`. */
async function packApi(packDir: string): Promise<Packed> {
  const { stdout } = await run('npm', ['pack', '--offline', '--json', '--pack-destination', packDir], { cwd: path.join(ROOT, 'packages', 'plugin-api') });
  return (JSON.parse(stdout) as Packed[])[0]!;
}

/** Unpacks the packed plugin API into `dir`/node_modules; returns its manifest. */
async function installPackedApi(dir: string, packDir: string, packed: Packed): Promise<{ dependencies: Record<string, string>; name: string }> {
  expect(packed.files.map((f) => f.path)).to.include.members(['dist/index.js', 'dist/index.d.ts', 'dist/media.js', 'dist/media.d.ts', 'package.json']);
  expect(packed.files.some((f) => f.path.endsWith('.ts') && !f.path.endsWith('.d.ts')), 'no .ts sources packed').to.equal(false);
  const target = path.join(dir, 'node_modules', '@wa-assistant-bot', 'plugin-api');
  await mkdir(target, { recursive: true });
  await tar.x({ file: path.join(packDir, packed.filename), cwd: target, strip: 1 });
  return JSON.parse(await readFile(path.join(target, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; name: string };
}

/** Keeps the content of the documents the bot sends (`.mydata` removes its file once sent). */
class KeepingTransport extends MemoryTransport {
  documents: string[] = [];
  override async sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage> {
    if (media.kind === 'document') this.documents.push(await readFile(media.path, 'utf8'));
    return super.sendMedia(chatId, media);
  }
}

describe('a plugin in its own folder, against the packed plugin API package', function () {
  this.timeout(120_000);
  let work: string;
  let pluginDir: string;
  let botDir: string;
  /** The one `npm pack` of packages/plugin-api (read-only to the tests: its file list, and its tarball unpacked). */
  let packed: Packed;
  before(async () => {
    work = await tempDir('plugin-package-');
    packed = await packApi(work);
    pluginDir = path.join(work, 'wa-plugin-jotter');
    botDir = path.join(work, 'bot');
    await mkdir(path.join(pluginDir, 'src'), { recursive: true });
    await mkdir(path.join(pluginDir, 'test'), { recursive: true });
    await mkdir(botDir, { recursive: true });
  });
  after(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('declares every package its built files import (JavaScript and declarations), in the same ranges as the bot', async () => {
    const dist = path.join(ROOT, 'packages', 'plugin-api', 'dist');
    const manifest = JSON.parse(await readFile(path.join(ROOT, 'packages', 'plugin-api', 'package.json'), 'utf8')) as { dependencies: Record<string, string>; imports?: Record<string, unknown> };
    const bot = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    const imported = new Set<string>();
    for (const file of (await readdir(dist, { recursive: true })).filter((f) => /\.(js|d\.ts)$/.test(f))) {
      const code = (await readFile(path.join(dist, file), 'utf8')).split('\n').filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line)).join('\n');
      // Statements at the start of a line (import/export … from 'x', import 'x'), dynamic import('x') and require('x')
      // (a package loaded at its first use); not strings.
      for (const [, a, b] of code.matchAll(/^(?:import|export)\s(?:[^;'"]*?\sfrom\s+)?['"]([^'"]+)['"]|\b(?:import|require)\(\s*['"]([^'"]+)['"]\s*\)/gm)) {
        // A `#name` import is the package's own alias (package.json "imports"): what counts is the package it names.
        // (one it does not map shows up below as the package "undefined", which no dependency declares)
        const spec = (a ?? b)!.startsWith('#') ? String(manifest.imports?.[(a ?? b)!]) : a ?? b;
        if (spec!.startsWith('.') || spec!.startsWith('node:')) continue;
        imported.add(spec!.startsWith('@') ? spec!.split('/').slice(0, 2).join('/') : spec!.split('/')[0]!);
      }
    }
    // The main entry and the ./media subpath are both scanned (image-size: only the media helpers use it).
    expect([...imported], 'the entries import packages (the check below is not empty)').to.include.members(['@sinclair/typebox', 'image-size', 'ajv']);
    expect([...imported].filter((name) => !manifest.dependencies[name]), 'imported but not in packages/plugin-api dependencies').to.deep.equal([]);
    // The public types are the package's own (small structural types where a host type touches the web server or tar
    // streams): no @types package, so a plugin gets no Koa declarations with the API.
    expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith('@types/') || /koa/.test(name))).to.deep.equal([]);
    for (const [name, range] of Object.entries(manifest.dependencies)) expect(range, name).to.equal(bot.dependencies[name] ?? bot.devDependencies[name]);
  });

  it('packs at most 20 runtime modules and at most 3 runtime dependencies: the API, not the services', async () => {
    const modules = packed.files.map((f) => f.path).filter((file) => file.endsWith('.js'));
    expect(modules, 'the entries are packed (the count below is not empty)').to.include.members(['dist/index.js', 'dist/media.js']);
    expect(modules.length, modules.join('\n')).to.be.at.most(20);
    // No module of the services' machinery: the jail, the provider chain, the key pool, the search engine, the stores' engines.
    expect(modules.filter((file) => /\/(jail\/jail|providers\/(provider-chain|key-pool)|search-log\/|store\/sql-search-log|store\/(atomic|json-file|history|memory))\.js$/.test(file))).to.deep.equal([]);
    const manifest = JSON.parse(await readFile(path.join(ROOT, 'packages', 'plugin-api', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies).length, Object.keys(manifest.dependencies).join(', ')).to.be.at.most(3);
  });

  it('compiles with strict + noUncheckedIndexedAccess, passes its own kit test, and runs in the bot from plugins.local/, its data in .mydata', async () => {
    // The plugin author's folder: an ESM-only package (exports with the import condition only).
    await writeFile(
      path.join(pluginDir, 'package.json'),
      JSON.stringify({ name: 'wa-plugin-jotter', version: '1.0.0', type: 'module', exports: { '.': { types: './dist/src/index.d.ts', import: './dist/src/index.js' } } }, null, 2),
    );
    await writeFile(path.join(pluginDir, 'tsconfig.json'), JSON.stringify(PLUGIN_TSCONFIG, null, 2));
    await writeFile(path.join(pluginDir, 'src', 'index.ts'), PLUGIN_SOURCE);
    await writeFile(path.join(pluginDir, 'test', 'jotter.test.ts'), PLUGIN_TEST);
    const api = await installPackedApi(pluginDir, work, packed);
    expect(Object.keys(api.dependencies).filter((d) => /baileys|^koa$|^@koa\//.test(d)), 'the API package depends on neither Baileys nor Koa').to.deep.equal([]);
    for (const dep of [...Object.keys(api.dependencies), '@types/node']) await linkFromBot(pluginDir, dep);
    // The bot itself, for the test kit only (a dev dependency of the plugin).
    await symlink(ROOT, path.join(pluginDir, 'node_modules', 'wa-assistant-bot'), 'dir');

    const tsc = await run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', pluginDir], { cwd: pluginDir }).then(
      () => '',
      (err: { stdout?: string }) => err.stdout ?? String(err),
    );
    expect(tsc, 'tsc errors').to.equal('');

    // The plugin's own test, through the public kit, as its author runs it.
    const own = await run(process.execPath, ['--test', path.join('dist', 'test', 'jotter.test.js')], { cwd: pluginDir }).catch((err: { stdout?: string; stderr?: string }) => {
      throw new Error(`the plugin's own test failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    });
    expect(own.stdout).to.match(/# pass 1\b/).and.match(/# fail 0\b/);

    // Installed into a bot: a symlink in plugins.local/ (git-ignored), the bot's tracked files untouched.
    await mkdir(path.join(botDir, 'plugins.local'));
    await symlink(pluginDir, path.join(botDir, 'plugins.local', 'jotter'), 'dir');
    await writeConfig(botDir, { access: { mode: 'everyone' }, plugins: { jotter: { enabled: true, maxJots: 5 } } });
    const sink = new PassThrough();
    let log = '';
    sink.on('data', (d: Buffer) => (log += d.toString()));
    const app = await createApp({ cwd: botDir, env: { PATH: process.env.PATH ?? '', API_KEY: 'sk-test', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' }, logger: createLogger({ pretty: false, destination: sink }), skipHealthProbe: true });
    const transport = new KeepingTransport();
    await app.connect(transport);
    const say = async (text: string, who: string) =>
      (await transport.push({ text, senderId: who, chatId: who })).filter((a) => a.type === 'text').map((a) => (a as { text: string }).text);
    try {
      expect(app.pluginFailures, log).to.deep.equal([]);
      expect(await say('.jot buy milk', ALICE)).to.deep.equal(['Jotted.']);
      expect(await say('.jot fix the bike', BOB)).to.deep.equal(['Jotted.']);
      expect(await say('.jots', ALICE)).to.deep.equal(['1 jots, first: buy milk']);
      // The ./media subpath and the file-name helper of the packed package, running in the bot.
      expect(await say('.jot 10.0.0.7', ALICE)).to.deep.equal(['That is a private network address; not jotted.']);
      expect(await say('.jotfile ../../etc/passwd', ALICE)).to.deep.equal(['jots would be saved as %2E.%2F..%2Fetc%2Fpasswd.txt']);
      await say('.mydata', ALICE);
      expect(transport.documents, 'the .mydata export was sent').to.have.length(1);
      const exported = JSON.parse(transport.documents[0]!) as { jotter?: { jots?: Record<string, Array<{ text: string }>> } };
      expect(exported.jotter?.jots?.[ALICE]?.map((j) => j.text)).to.deep.equal(['buy milk']);
      expect(transport.documents[0]).not.to.include('fix the bike');
    } finally {
      await app.stop();
    }
  });
});
