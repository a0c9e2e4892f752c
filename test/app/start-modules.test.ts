import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../helpers/checkout.js';
import { loadInFreshProcess } from '../helpers/loaded-modules.js';

/**
 * What a start loads is time before "console chat ready": packages nothing uses until later load then, not at start.
 * One fresh process builds the whole app (every plugin, the real config) and lists what it loaded.
 */
describe('start-up loads what answering needs later only when it is needed', function () {
  this.timeout(120_000);
  let dir: string;
  let loaded: string[];
  let builtins: string[];
  let imported: string[];
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'start-modules-'));
    const env = { PATH: process.env.PATH ?? '', API_KEY: 'sk-start-modules', BASE_URL: 'http://127.0.0.1:9/v1', MODEL: 'm' };
    const start = `const { Writable } = await import('node:stream'); const app = await m.createApp({ cwd: ${JSON.stringify(dir)}, env: ${JSON.stringify(env)}, skipHealthProbe: true, logDestination: new Writable({ write: (_c, _e, done) => done() }) }); await app.stop()`;
    ({ loaded, builtins, imported } = await loadInFreshProcess(path.join(ROOT, 'dist', 'app', 'app.js'), start));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const of = (pkg: string) => loaded.filter((url) => url.includes(`/node_modules/${pkg}/`));

  it('starts every plugin (the check below is not empty)', () => {
    expect(loaded.some((url) => url.includes('/dist/plugins/voice/'))).to.equal(true);
    expect(of('ajv').length).to.be.greaterThan(0);
  });

  it('loads at most 365 modules in all (359 on 29 Nov 2026 evening, 719 that morning): each costs start-up CPU', () => {
    // Raising this is a choice: first see whether what is new can load at its first use (docs/benchmark.md, row 4).
    expect(new Set(loaded).size).to.be.at.most(365);
  });

  it("loads TypeBox as the build's bundle (a few files), not its ~250 modules one by one", () => {
    expect(of('@sinclair/typebox'), "a module imports '@sinclair/typebox': import it as '#typebox' (the bundle)").to.deep.equal([]);
    const bundle = loaded.filter((url) => url.includes('/dist/vendor/typebox/'));
    expect(bundle.length).to.be.within(1, 3);
  });

  it("loads TypeBox's Value module (128 KB, checking mcp.json) only when mcp.json exists, not with every start", () => {
    expect(loaded.filter((url) => url.endsWith('/dist/vendor/typebox/value.js'))).to.deep.equal([]);
  });

  it('loads image-size (about 26 modules) with the first picture checked, not at start', () => {
    expect(of('image-size')).to.deep.equal([]);
  });

  it("loads mime-types (mime-db's JSON of every type) with the first type looked up, not at start", () => {
    expect(of('mime-types')).to.deep.equal([]);
    expect(of('mime-db')).to.deep.equal([]);
  });

  it("loads Node's fetch (undici, with http2 and zlib) at the first answer, not at start: no module reads the lazy Response global as it loads", () => {
    expect(builtins, 'the check below is not empty').to.include('net');
    expect(builtins).to.not.include('internal/deps/undici/undici');
    expect(builtins).to.not.include('http2');
  });

  it('loads node:http (client and server, nine of its modules) at the first request or the web server, node:https (and TLS) at the first https request or download, not at start', () => {
    expect(builtins).to.not.include('http');
    expect(builtins).to.not.include('_http_client');
    expect(builtins).to.not.include('https');
    expect(builtins).to.not.include('tls');
  });

  it('loads the openai SDK (about 150 modules) at the first request, not at start', () => {
    expect(of('openai')).to.deep.equal([]);
  });

  it('loads croner (cron patterns) with the first reminder set or repeat stepped, not at start', () => {
    expect(of('croner')).to.deep.equal([]);
  });

  it('loads tar-stream with the first workspace job, not at start', () => {
    expect(of('tar-stream')).to.deep.equal([]);
  });

  it("loads the gateway probe and the start check (each leg's first request) with them, after ready, not at start", () => {
    const ours = (file: string) => loaded.filter((url) => url.endsWith(file));
    expect(ours('/dist/core/kernel/bot.js'), 'the check below is not empty').to.have.length(1);
    expect(ours('/dist/app/start-check.js')).to.deep.equal([]);
    expect(ours('/dist/core/services/providers/health.js')).to.deep.equal([]);
  });

  it('loads the document reader, the recording length and the public download at their first call, not with the built-in tier (core/builtin) every start loads', () => {
    const ours = (file: string) => loaded.filter((url) => url.endsWith(file));
    expect(ours('/dist/core/builtin.js'), 'the check below is not empty').to.have.length(1);
    expect(ours('/dist/core/services/documents/read-document.js')).to.deep.equal([]);
    expect(ours('/dist/core/services/media/duration.js')).to.deep.equal([]);
    expect(ours('/dist/core/services/jail/public-fetch.js')).to.deep.equal([]);
  });

  it('requires the CommonJS packages a start needs (pino, libsql, proper-lockfile, dotenv, fastest-levenshtein) instead of importing them: an ES import has Node parse each one for its export names and wrap it', () => {
    const viaImport = imported.filter((url) => /\/node_modules\/(pino|libsql|proper-lockfile|dotenv|fastest-levenshtein)\//.test(url));
    expect(of('pino').length, 'the check below is not empty').to.be.greaterThan(0);
    expect(imported.some((url) => url.includes('/dist/core/kernel/bot.js')), 'the check below is not empty').to.equal(true);
    expect(viaImport).to.deep.equal([]);
  });

  it('loads resolve.exports (reading a plugin package\'s entry) with the first plugin package found, not at start', () => {
    expect(of('resolve.exports')).to.deep.equal([]);
  });

  it('loads marked (the Markdown parser, 52 KB with the rules it builds as it loads) with the first answer holding Markdown, not at start', () => {
    expect(of('marked')).to.deep.equal([]);
  });

  it("loads Node's performance timing (perf_hooks, ten of its modules) with the first message timed, not at start", () => {
    expect(builtins, 'the check below is not empty').to.include('net');
    expect(builtins).to.not.include('perf_hooks');
    expect(builtins).to.not.include('internal/perf/performance');
  });

  it("loads the jail's egress proxy (and node:dns) with the first jailed job that may reach the network, not at start", () => {
    const ours = (file: string) => loaded.filter((url) => url.endsWith(file));
    expect(ours('/dist/core/services/jail/jail.js'), 'the check below is not empty').to.have.length(1);
    expect(ours('/dist/core/services/jail/egress-proxy.js')).to.deep.equal([]);
    expect(builtins).to.not.include('dns/promises');
  });

  it('loads prom-client (with @opentelemetry/api, about 80 modules) when the metrics are first read, not at start', () => {
    expect(of('prom-client')).to.deep.equal([]);
    expect(of('@opentelemetry/api')).to.deep.equal([]);
  });

  /**
   * What of each plugin's own modules a start may load: declaring it (options, stores, commands' names, the predicates
   * that decide whether a message is its) and the work it must do at start. What handling needs loads with the first
   * message, command or tool call that needs it: a module missing from a list here was imported statically again.
   */
  const AT_START: Record<string, string[]> = {
    workspace: ['index.js', 'options.js', 'python-runtime.js', 'schemas.js', 'store.js'],
    voice: ['index.js', 'options.js', 'stores.js', 'archive-note.js', 'schemas.js'],
    vision: ['index.js', 'options.js', 'find-image.js'],
    search: ['index.js'],
    remind: ['index.js', 'store.js', 'zone.js'],
    documents: ['index.js'],
    mp3: ['index.js', 'options.js'],
    links: ['find-links.js', 'index.js', 'options.js'],
    // Without mcp.json (none here): the MCP client loads only when the file exists.
    mcp: ['config-path.js', 'index.js'],
    catchup: ['index.js', 'store.js'],
    recall: ['entry.js', 'index.js'],
  };
  for (const [plugin, allowed] of Object.entries(AT_START)) {
    it(`loads only what declaring the ${plugin} plugin needs (${allowed.join(', ')}); its handling at first use`, () => {
      const own = loaded.filter((url) => url.includes(`/dist/plugins/${plugin}/`)).map((url) => url.slice(url.lastIndexOf('/') + 1));
      expect(own, 'the check below is not empty').to.include('index.js');
      expect([...new Set(own)].sort(), `plugins/${plugin}: load what only handling needs behind a memoized import() (see its index.ts)`).to.deep.equal([...allowed].sort());
    });
  }
});
