import { expect } from 'chai';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../../helpers/checkout.js';
import { loadInFreshProcess } from '../../helpers/loaded-modules.js';

/** What the plugin entry must never pull in: the app wiring, the web server, the WhatsApp adapter and Baileys, Koa. */
const FORBIDDEN = [/\/dist\/app\//, /\/dist\/web\//, /\/dist\/core\/adapters\//, /\/node_modules\/@whiskeysockets\/baileys\//, /\/node_modules\/koa\//, /\/node_modules\/@koa\//];

describe('the plugin entry (core/index.ts, wa-assistant-bot/plugin): small and light', function () {
  this.timeout(60_000);
  let entry: { loaded: string[]; runtimeNames: string[] };
  before(async () => {
    entry = await loadInFreshProcess(path.join(ROOT, 'dist', 'core', 'index.js'));
  });

  it('is seen loading modules (the check below is not empty)', () => {
    expect(entry.loaded.some((url) => url.endsWith('/dist/core/index.js'))).to.equal(true);
    expect(entry.loaded.some((url) => url.includes('/dist/core/kernel/plugin/contract.js'))).to.equal(true);
  });

  it('loads neither the app wiring, the web server, the WhatsApp adapter (Baileys) nor Koa', () => {
    const offending = entry.loaded.filter((url) => FORBIDDEN.some((re) => re.test(url)));
    expect(offending).to.deep.equal([]);
  });

  it('offers at most 40 runtime names, definePlugin, defineTool, Type and the coded errors among them', () => {
    expect(entry.runtimeNames.length, entry.runtimeNames.join(', ')).to.be.at.most(40);
    expect(entry.runtimeNames).to.include.members(['definePlugin', 'defineTool', 'Type', 'PluginError', 'CodedError']);
    // The media and jail helpers are behind their own entry; the data-file engines are the built-in plugins' tier.
    expect(entry.runtimeNames).to.not.include.members(['pinFileFormat']);
    expect(entry.runtimeNames).to.not.include.members(['JsonFile']);
  });

  it('the media entry loads no adapter, web or app either', async () => {
    for (const name of ['media']) {
      const { loaded, runtimeNames } = await loadInFreshProcess(path.join(ROOT, 'dist', 'core', `${name}.js`));
      expect(runtimeNames.length, name).to.be.greaterThan(3);
      expect(loaded.filter((url) => FORBIDDEN.some((re) => re.test(url))), name).to.deep.equal([]);
    }
  });

  it('the packable @wa-assistant-bot/plugin-api carries the same runtime names and loads no app, adapter, web, Baileys or Koa', async () => {
    const packaged = await loadInFreshProcess(path.join(ROOT, 'packages', 'plugin-api', 'dist', 'index.js'));
    expect(packaged.loaded.some((url) => url.includes('/packages/plugin-api/dist/kernel/plugin/contract.js'))).to.equal(true);
    expect(packaged.loaded.filter((url) => FORBIDDEN.some((re) => re.test(url)) || url.includes('/dist/core/'))).to.deep.equal([]);
    expect(packaged.runtimeNames).to.deep.equal(entry.runtimeNames);
  });

  it('the packable package\'s ./media subpath carries the same runtime names as the bot\'s entry and loads no app, adapter, web, Baileys or Koa', async () => {
    for (const name of ['media']) {
      const packaged = await loadInFreshProcess(path.join(ROOT, 'packages', 'plugin-api', 'dist', `${name}.js`));
      const own = await loadInFreshProcess(path.join(ROOT, 'dist', 'core', `${name}.js`));
      expect(packaged.loaded.some((url) => url.endsWith(`/packages/plugin-api/dist/${name}.js`)), name).to.equal(true);
      expect(packaged.loaded.filter((url) => FORBIDDEN.some((re) => re.test(url)) || url.includes('/dist/core/')), name).to.deep.equal([]);
      expect(packaged.runtimeNames, name).to.deep.equal(own.runtimeNames);
    }
  });

  it('the package names them as subpaths: wa-assistant-bot/plugin and /media are these entries; /storage is gone', async () => {
    const gone = 'wa-assistant-bot/storage';
    await import(gone).then(() => expect.fail('wa-assistant-bot/storage still resolves'), (err: NodeJS.ErrnoException) => expect(err.code).to.equal('ERR_PACKAGE_PATH_NOT_EXPORTED'));
    for (const [subpath, file] of [['plugin', 'index'], ['media', 'media']]) {
      const byName = (await import(`wa-assistant-bot/${subpath}`)) as Record<string, unknown>;
      const byFile = (await import(pathToFileURL(path.join(ROOT, 'dist', 'core', `${file}.js`)).href)) as Record<string, unknown>;
      expect(Object.keys(byName), subpath).to.deep.equal(Object.keys(byFile));
      for (const key of Object.keys(byFile)) expect(byName[key], `${subpath}: ${key}`).to.equal(byFile[key]);
    }
  });
});
