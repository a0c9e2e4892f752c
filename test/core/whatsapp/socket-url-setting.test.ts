import { expect } from 'chai';
import sinon from 'sinon';
import { loadSettings, SettingsError } from '../../../core/services/config/settings.js';
import { cleanup, setup } from './harness.js';
import { login, startWebTest, TOKEN } from '../../web/web-helpers.js';

const TOKEN_IN_URL = 'tok-4f2a9c81e7d3';
const URL_WITH_TOKEN = `ws://127.0.0.1:45321/ws/chat?access_token=${TOKEN_IN_URL}`;
const base = { API_KEY: 'k-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' };
const fetchCalls = () => (globalThis.fetch as unknown as sinon.SinonStub).callCount;

describe('WA_WEBSOCKET_URL (.env only): where the WhatsApp socket connects', function () {
  this.timeout(20_000);
  afterEach(cleanup);

  it('is read from .env as a ws:// or wss:// URL; anything else stops the start naming the setting (token hidden)', () => {
    expect(loadSettings({ cwd: '/tmp', env: base }).whatsappSocketUrl).to.equal('');
    expect(loadSettings({ cwd: '/tmp', env: { ...base, WA_WEBSOCKET_URL: URL_WITH_TOKEN } }).whatsappSocketUrl).to.equal(URL_WITH_TOKEN);
    for (const bad of [`http://127.0.0.1:1/ws?access_token=${TOKEN_IN_URL}`, 'not a url']) {
      let error: unknown;
      try {
        loadSettings({ cwd: '/tmp', env: { ...base, WA_WEBSOCKET_URL: bad } });
      } catch (err) {
        error = err;
      }
      expect(error, bad).to.be.instanceOf(SettingsError);
      expect((error as Error).message).to.include('WA_WEBSOCKET_URL').and.not.include(TOKEN_IN_URL);
    }
  });

  it('a credential in the URL (query value, password) is a secret the log redactor hides', () => {
    const settings = loadSettings({ cwd: '/tmp', env: { ...base, WA_WEBSOCKET_URL: 'wss://user:pw-9b8c7d@proxy.example/ws/chat?sig=abcdef123' } });
    expect(settings.secrets).to.include('pw-9b8c7d').and.include('abcdef123');
  });

  it('is handed to the Baileys socket as waWebSocketUrl, and the start log warns that the endpoint sees everything', async () => {
    const h = await setup({ env: { WA_WEBSOCKET_URL: URL_WITH_TOKEN } });
    await h.sockets.waitForSockets(1);
    expect(String(h.sockets.last.options.waWebSocketUrl)).to.equal(URL_WITH_TOKEN);
    const warning = h.logs().find((l) => String(l.msg).includes('WA_WEBSOCKET_URL is set'));
    expect(warning?.level).to.equal(40);
    expect(String(warning?.msg)).to.include('ws://127.0.0.1:45321/ws/chat').and.include('sees the whole session');
    expect(JSON.stringify(h.logs())).to.not.include(TOKEN_IN_URL);
  });

  it('unset: Baileys keeps WhatsApp\'s own URL and nothing is warned', async () => {
    const h = await setup();
    await h.sockets.waitForSockets(1);
    expect(h.sockets.last.options).to.not.have.property('waWebSocketUrl');
    expect(h.messages().some((m) => m.includes('WA_WEBSOCKET_URL'))).to.equal(false);
  });

  it('set: the first connection does not look the Web version up on WhatsApp\'s site; a 405 from the endpoint does', async () => {
    const h = await setup({ env: { WA_WEBSOCKET_URL: URL_WITH_TOKEN }, transport: { backoff: { baseMs: 1, maxMs: 2 } } });
    await h.sockets.waitForSockets(1);
    expect(fetchCalls()).to.equal(0);
    expect(h.sockets.last.options.version).to.be.an('array');
    h.sockets.last.close(405, 'Connection Failure');
    await h.sockets.waitForSockets(2);
    expect(fetchCalls()).to.equal(1);
    expect(h.sockets.last.options.version).to.deep.equal([2, 3000, 1000000001]);
  });

  it('unset: the version is looked up before the first connection (as before)', async () => {
    const h = await setup();
    await h.sockets.waitForSockets(1);
    expect(fetchCalls()).to.equal(1);
  });

  it('the dashboard shows it read-only among the .env-only settings, without the token', async () => {
    const w = await startWebTest({ token: TOKEN, env: { WA_WEBSOCKET_URL: URL_WITH_TOKEN } });
    try {
      const { page } = await login(w.port, TOKEN);
      const section = page.slice(page.indexOf('Set in .env only'));
      expect(section).to.include('WA_WEBSOCKET_URL').and.include('ws://127.0.0.1:45321/ws/chat?access_token=…');
      expect(page).to.not.include(TOKEN_IN_URL);
      expect(page).to.not.match(/name="[^"]*(WA_WEBSOCKET_URL|websocket)/i);
    } finally {
      await w.stop();
    }
  });

  it('the dashboard says "not set" when WhatsApp\'s own server is used', async () => {
    const w = await startWebTest({ token: TOKEN });
    try {
      const { page } = await login(w.port, TOKEN);
      const section = page.slice(page.indexOf('Set in .env only'));
      expect(section).to.match(/WA_WEBSOCKET_URL<\/b><\/td><td><i>not set<\/i>/);
    } finally {
      await w.stop();
    }
  });
});
