import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { definePlugin } from '../../core/index.js';
import type { SessionState } from '../../core/kernel/port/transport.js';
import pingPlugin from '../../plugins/ping/index.js';
import { DEFAULT_LOGIN_LIMITS, LoginLimiter } from '../../web/dashboard/auth.js';
import { formatTime } from '../../web/format.js';
import { cookieHeader, csrfOf, formFields, login, request, sameOrigin, startWebTest, TOKEN, versionOf, type WebTest } from './web-helpers.js';

const BOT_PHONE = '62899999999';
const BOT_LID = '123456789012345';

const sitePlugin = definePlugin({
  name: 'site',
  description: 'serves a page like a workspace site',
  setup: (host) => {
    host.serveSite({
      label: 'test sites',
      handler: async (ctx, next) => {
        if (ctx.path !== '/alice/index.html') return next();
        ctx.type = 'html';
        ctx.body = '<h1>Alice site</h1>';
      },
    });
    return {};
  },
});

function loginLog(w: WebTest) {
  return w.t.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('dashboard login'));
}

describe('web server without CONFIG_TOKEN', () => {
  let w: WebTest;
  before(async () => {
    w = await startWebTest({ plugins: [pingPlugin] });
  });
  after(() => w.stop());

  it('answers 404 on every /config path, with no hint of a login form', async () => {
    for (const [method, path] of [['GET', '/config'], ['GET', '/config/login'], ['GET', '/config/'], ['POST', '/config/login'], ['POST', '/config/save']] as const) {
      const res = await request(w.port, { method, path, body: method === 'POST' ? 'token=x' : undefined });
      expect(res.status, `${method} ${path}`).to.equal(404);
      expect(res.body).to.equal('Not Found');
      expect(res.body.toLowerCase()).not.to.match(/login|token|password/);
      expect(res.setCookies).to.deep.equal([]);
    }
  });

  it('says in the start log that the dashboard is off', () => {
    expect(w.t.logs().some((l) => /CONFIG_TOKEN: not set/.test(l.msg))).to.equal(true);
  });

  it('still serves the status page at /', async () => {
    const res = await request(w.port, { path: '/' });
    expect(res.status).to.equal(200);
    expect(res.body).to.contain('Session: <b>linked</b>');
  });
});

describe('web server security', () => {
  let w: WebTest;
  before(async () => {
    w = await startWebTest({ token: TOKEN, plugins: [pingPlugin, sitePlugin], env: { PUBLIC_BASE_URL: 'https://bot.example.org', WEB_ALLOWED_HOSTS: 'bot.lan' } });
  });
  after(() => w.stop());

  it('listens on 127.0.0.1 by default', () => {
    expect(w.web.host).to.equal('127.0.0.1');
  });

  it('refuses requests whose Host header is not an expected name (DNS rebinding)', async () => {
    for (const host of ['evil.example', `evil.example:${w.port}`, `127.0.0.1:${w.port + 1}`, `localhost:1`, 'bot.example.org.evil.example']) {
      const res = await request(w.port, { path: '/', headers: { host } });
      expect(res.status, `Host "${host}"`).to.be.oneOf([421, 400]);
      expect(res.body).not.to.contain('Capabilities');
    }
    const dash = await request(w.port, { path: '/config/login', headers: { host: `rebind.example:${w.port}` } });
    expect(dash.status).to.equal(421);
    expect(dash.body).not.to.contain('token');
  });

  it('accepts the loopback names with the port, the PUBLIC_BASE_URL host and WEB_ALLOWED_HOSTS', async () => {
    for (const host of [`127.0.0.1:${w.port}`, `localhost:${w.port}`, `LOCALHOST:${w.port}`, `[::1]:${w.port}`, `bot.lan:${w.port}`]) {
      const res = await request(w.port, { path: '/', headers: { host } });
      expect(res.status, `Host "${host}"`).to.equal(200);
    }
  });

  it('keeps the QR page and the dashboard off the public host (PUBLIC_BASE_URL is for sites)', async () => {
    for (const path of ['/', '/config', '/config/login']) {
      const res = await request(w.port, { path, headers: { host: 'bot.example.org' } });
      expect(res.status, path).to.equal(404);
      expect(res.body).to.equal('Not Found');
    }
    expect((await request(w.port, { path: '/config/login', headers: { host: `localhost:${w.port}` } })).status).to.equal(200);
  });

  it('keeps plugin sites (workspace sites) working under the public host', async () => {
    const res = await request(w.port, { path: '/alice/index.html', headers: { host: 'bot.example.org' } });
    expect(res.status).to.equal(200);
    expect(res.body).to.contain('Alice site');
    expect(res.headers['x-content-type-options']).to.equal('nosniff');
    expect(res.headers['referrer-policy']).to.equal('no-referrer');
  });

  it('sends security headers on its own pages and never lets them be cached', async () => {
    for (const path of ['/', '/config/login']) {
      const res = await request(w.port, { path });
      expect(res.headers['content-security-policy'], path).to.match(/default-src 'none'/).and.match(/frame-ancestors 'none'/).and.match(/form-action 'self'/);
      expect(res.headers['content-security-policy']).not.to.match(/unsafe-inline|unsafe-eval/);
      expect(res.headers['content-security-policy']).to.match(/script-src 'self';/).and.match(/connect-src 'self';/);
      expect(res.headers['x-frame-options']).to.equal('DENY');
      expect(res.headers['x-content-type-options']).to.equal('nosniff');
      expect(res.headers['referrer-policy']).to.equal('same-origin');
      expect(res.headers['cache-control']).to.equal('no-store');
    }
  });

  it('refuses cross-site state-changing requests before anything else', async () => {
    const { cookie, page } = await login(w.port, TOKEN);
    const before = await w.readConfig();
    const fields = formFields(page);
    fields.set('botName', 'Hijacked');
    for (const headers of <Array<Record<string, string>>>[{ origin: 'https://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site', origin: `http://localhost:${w.port}` }]) {
      const res = await request(w.port, { method: 'POST', path: '/config/save', headers: { cookie, ...headers }, body: fields.toString() });
      expect(res.status, JSON.stringify(headers)).to.equal(403);
      expect(res.body).to.match(/cross-site/i);
    }
    expect(await w.readConfig()).to.equal(before);
    const plugin = await request(w.port, { method: 'POST', path: '/alice/index.html', headers: { origin: 'https://evil.example' }, body: 'x=1' });
    expect(plugin.status).to.equal(403);
  });
});

describe('dashboard login', () => {
  let w: WebTest;
  beforeEach(async () => {
    w = await startWebTest({ token: TOKEN, plugins: [pingPlugin] });
  });
  afterEach(() => w.stop());

  it('sends a visitor without a session to the login form', async () => {
    const res = await request(w.port, { path: '/config' });
    expect(res.status).to.equal(303);
    expect(res.headers.location).to.equal('/config/login');
    const form = await request(w.port, { path: '/config/login' });
    expect(form.status).to.equal(200);
    expect(form.body).to.contain('type="password"').and.contain('method="post"');
    expect(form.body).not.to.contain(TOKEN);
  });

  it('refuses a wrong token (401, logged without the typed token) and accepts the right one with a safe cookie', async () => {
    const form = await request(w.port, { path: '/config/login' });
    const cookie = cookieHeader(form.setCookies);
    const wrong = await request(w.port, { method: 'POST', path: '/config/login', headers: { cookie, ...sameOrigin(w.port) }, body: new URLSearchParams({ _csrf: csrfOf(form.body), token: 'guess-number-one' }).toString() });
    expect(wrong.status).to.equal(401);
    expect(wrong.body).to.contain('Wrong token');
    expect(wrong.setCookies.join()).not.to.contain('wab_dash=');
    const failed = loginLog(w).find((l) => /failed/.test(l.msg));
    expect(failed).to.include({ ip: '127.0.0.1' });
    expect(JSON.stringify(w.t.logs())).not.to.contain('guess-number-one');

    const right = await request(w.port, { method: 'POST', path: '/config/login', headers: { cookie, ...sameOrigin(w.port) }, body: new URLSearchParams({ _csrf: csrfOf(form.body), token: TOKEN }).toString() });
    expect(right.status).to.equal(303);
    expect(right.headers.location).to.equal('/config');
    const session = right.setCookies.find((c) => c.startsWith('wab_dash='));
    const signature = right.setCookies.find((c) => c.startsWith('wab_dash.sig='));
    expect(session).to.match(/httponly/i).and.match(/samesite=strict/i).and.match(/expires=/i).and.match(/path=\/config/i);
    expect(signature).to.match(/httponly/i).and.match(/samesite=strict/i);
    expect(session).not.to.contain(TOKEN);
    const page = await request(w.port, { path: '/config', headers: { cookie: cookieHeader(right.setCookies, cookie) } });
    expect(page.status).to.equal(200);
    expect(page.body).to.contain('Log out');
    expect(page.body).not.to.contain(TOKEN);
    expect(JSON.stringify(w.t.logs())).not.to.contain(TOKEN);
  });

  it('refuses a login without the form\'s CSRF token', async () => {
    const form = await request(w.port, { path: '/config/login' });
    const noCookie = await request(w.port, { method: 'POST', path: '/config/login', body: new URLSearchParams({ _csrf: csrfOf(form.body), token: TOKEN }).toString() });
    expect(noCookie.status).to.equal(403);
    const noField = await request(w.port, { method: 'POST', path: '/config/login', headers: { cookie: cookieHeader(form.setCookies) }, body: new URLSearchParams({ token: TOKEN }).toString() });
    expect(noField.status).to.equal(403);
    expect(noField.setCookies.join()).not.to.contain('wab_dash=');
  });

  it('slows guesses from rotating 127.0.0.x addresses as one, and lets the right token in without waiting', async () => {
    await w.stop();
    const waited: number[] = [];
    const limiter = new LoginLimiter({ ...DEFAULT_LOGIN_LIMITS, freePerAddress: 3, freeGlobal: 4 }, Date.now, async (ms) => void waited.push(ms));
    w = await startWebTest({ token: TOKEN, plugins: [pingPlugin], web: { dashboard: { limiter } } });
    const form = await request(w.port, { path: '/config/login' });
    const cookie = cookieHeader(form.setCookies);
    const attempt = (token: string, localAddress: string) =>
      request(w.port, { method: 'POST', path: '/config/login', localAddress, headers: { cookie, ...sameOrigin(w.port) }, body: new URLSearchParams({ _csrf: csrfOf(form.body), token }).toString() });
    const statuses: number[] = [];
    // One guess from each of 8 addresses: none of them is over its own limit, all together they are.
    for (let i = 0; i < 8; i++) statuses.push((await attempt(`wrong-${i}`, `127.0.0.${i + 2}`)).status);
    expect(statuses).to.deep.equal([401, 401, 401, 401, 401, 401, 401, 401]);
    expect(waited).to.deep.equal([1000, 2000, 4000]);
    // The first failure is logged at once with its address; the others only in the periodic summary.
    expect(loginLog(w).filter((l) => /login failed/.test(l.msg)).map((l) => l.ip)).to.deep.equal(['127.0.0.2']);
    // The owner is never slowed: the right token gets in at once, and clears the slowing for everyone.
    const right = await attempt(TOKEN, '127.0.0.1');
    expect(right.status).to.equal(303);
    expect(waited).to.have.length(3);
    expect(right.setCookies.join()).to.contain('wab_dash=');
    expect((await attempt('wrong-again', '127.0.0.2')).status).to.equal(401);
    expect(waited).to.have.length(3);
  });

  it('never makes a wrong token wait longer than the cap, however many guesses came before', async () => {
    const limiter = new LoginLimiter();
    for (let i = 0; i < 500; i++) limiter.fail(`127.0.${i >> 8}.${i & 255}`);
    expect(limiter.delayMs('127.0.0.1')).to.equal(DEFAULT_LOGIN_LIMITS.maxDelayMs);
    expect(DEFAULT_LOGIN_LIMITS.maxDelayMs).to.be.at.most(30_000);
  });

  it('treats a forged, unsigned or unknown session cookie as no session', async () => {
    const { cookie } = await login(w.port, TOKEN);
    const id = /wab_dash=([^;]+)/.exec(cookie)?.[1] ?? '';
    const forged = [`wab_dash=${id}`, `wab_dash=${id}; wab_dash.sig=AAAAAAAAAAAAAAAAAAAAAAAAAAA`, 'wab_dash=made-up; wab_dash.sig=made-up'];
    for (const c of forged) {
      const page = await request(w.port, { path: '/config', headers: { cookie: c } });
      expect(page.status, c).to.equal(303);
      const save = await request(w.port, { method: 'POST', path: '/config/save', headers: { cookie: c }, body: '_csrf=x' });
      expect(save.status, c).to.equal(401);
      expect(save.body).to.contain('Log in again');
    }
  });

  it('logs out: the old cookie no longer opens the dashboard', async () => {
    const { cookie, page } = await login(w.port, TOKEN);
    const noCsrf = await request(w.port, { method: 'POST', path: '/config/logout', headers: { cookie }, body: '' });
    expect(noCsrf.status).to.equal(403);
    const out = await request(w.port, { method: 'POST', path: '/config/logout', headers: { cookie, ...sameOrigin(w.port) }, body: `_csrf=${encodeURIComponent(csrfOf(page))}` });
    expect(out.status).to.equal(303);
    expect(out.headers.location).to.equal('/config/login?out=1');
    const after = await request(w.port, { path: '/config', headers: { cookie } });
    expect(after.status).to.equal(303);
  });

  it('warns only about a weak token in the start log', async () => {
    expect(w.t.logs().some((l) => /CONFIG_TOKEN is shorter/.test(l.msg))).to.equal(false);
    const weak = await startWebTest({ token: 'short-secret', plugins: [pingPlugin] });
    try {
      const line = weak.t.logs().find((l) => /CONFIG_TOKEN is shorter than 64 hex characters/.test(l.msg));
      expect(line?.level).to.equal(40);
      expect(line?.msg).to.contain('openssl rand -hex 32');
      expect(JSON.stringify(weak.t.logs())).not.to.contain('short-secret');
    } finally {
      await weak.stop();
    }
  });
});

describe('dashboard saving', () => {
  let w: WebTest;
  let cookie: string;
  let page: string;
  beforeEach(async () => {
    w = await startWebTest({ token: TOKEN, plugins: [pingPlugin], ownIds: [BOT_PHONE, BOT_LID] });
    ({ cookie, page } = await login(w.port, TOKEN));
  });
  afterEach(() => w.stop());

  const save = (fields: URLSearchParams, headers: Record<string, string> = {}) =>
    request(w.port, { method: 'POST', path: '/config/save', headers: { cookie, ...sameOrigin(w.port), ...headers }, body: fields.toString() });

  it('shows the current settings, plugins, health and the bot\'s own ids', async () => {
    expect(page).to.contain('name="prefix" value="."');
    expect(page).to.contain('name="plugin:ping:enabled" checked');
    expect(page).to.contain(`value="${BOT_PHONE}"`).and.contain(`value="${BOT_LID}"`);
    expect(page).to.contain('id="session"');
    // Health has its own views now (the settings page stays short).
    const views = await Promise.all(['/config/status', '/config/providers', '/config/usage'].map((path) => request(w.port, { path, headers: { cookie } })));
    const [status, providers, usage] = views.map((v) => v.body);
    for (const id of ['session', 'problems']) expect(id === 'session' ? page : status).to.contain(`id="${id}"`);
    for (const id of ['capabilities', 'providers', 'audio-keys']) expect(providers).to.contain(`id="${id}"`);
    expect(usage).to.contain('id="usage"');
    expect(providers).to.contain('Audio keys: <b>0</b>');
    for (const body of [page, status, providers, usage]) expect(body).not.to.contain('test-key-123456');
  });

  it('saves: validates, writes atomically with a backup, and applies at once (a disabled plugin stops answering)', async () => {
    expect((await w.t.transport.push({ text: '.ping' })).some((a) => a.type === 'text' && a.text.startsWith('pong'))).to.equal(true);
    const before = await w.readConfig();
    const fields = formFields(page);
    fields.delete('plugin:ping:enabled');
    fields.set('botName', 'Helper <b>&');
    fields.set('owners', '62811111111\n+6281222, 62833333333@s.whatsapp.net 62811111111');
    const res = await save(fields);
    expect(res.status).to.equal(303);
    expect(res.headers.location).to.equal('/config?saved=1');
    const saved = JSON.parse(await w.readConfig());
    expect(saved.plugins.ping.enabled).to.equal(false);
    expect(saved.botName).to.equal('Helper <b>&');
    expect(saved.owners).to.deep.equal(['62811111111', '6281222', '62833333333']);
    expect(saved.ai).to.deep.equal(JSON.parse(before).ai);
    expect(await readFile(`${w.configFile}.bak`, 'utf8')).to.equal(before);
    expect(w.t.app.config.botName).to.equal('Helper <b>&');
    const texts = (await w.t.transport.push({ text: '.ping' })).flatMap((a) => (a.type === 'text' ? [a.text] : []));
    expect(texts.some((t) => t.startsWith('pong'))).to.equal(false);
    expect(texts.join()).to.contain('.ping is turned off: the owner switched off ping');
    const after = await request(w.port, { path: '/config?saved=1', headers: { cookie } });
    expect(after.body).to.contain('Saved and applied');
    expect(after.body).to.contain('Helper &lt;b&gt;&amp;').and.not.contain('Helper <b>&');
  });

  it('shows the WhatsApp read receipts and presence switches, and turning one off is saved and applied at once', async () => {
    expect(page).to.contain('name="whatsapp.readReceipts" checked').and.contain('name="whatsapp.presence" checked');
    expect(w.t.app.config.whatsapp).to.deep.equal({ readReceipts: true, presence: true });
    const fields = formFields(page);
    fields.delete('whatsapp.readReceipts');
    expect((await save(fields)).status).to.equal(303);
    expect(JSON.parse(await w.readConfig()).whatsapp).to.deep.equal({ readReceipts: false, presence: true });
    expect(w.t.app.config.whatsapp).to.deep.equal({ readReceipts: false, presence: true });
    const again = await request(w.port, { path: '/config', headers: { cookie } });
    expect(again.body).to.contain('name="whatsapp.readReceipts">').and.contain('name="whatsapp.presence" checked');
    // A form that did not show the switches (no marker) leaves them as they are.
    const other = formFields(again.body);
    other.delete('whatsapp:present');
    other.delete('whatsapp.presence');
    expect((await save(other)).status).to.equal(303);
    expect(JSON.parse(await w.readConfig()).whatsapp).to.deep.equal({ readReceipts: false, presence: true });
  });

  it('refuses an invalid field with a clear error on the page and leaves config.json as it was', async () => {
    const before = await w.readConfig();
    const fields = formFields(page);
    fields.set('port', 'eighty');
    fields.set('targetUserIds', 'not-an-id');
    const res = await save(fields);
    expect(res.status).to.equal(422);
    expect(res.body).to.contain('Not saved');
    expect(res.body).to.match(/data-field="port">port: must be integer/);
    expect(res.body).to.match(/data-field="targetUserIds">targetUserIds\.0: must be digits only/);
    expect(res.body).to.contain('value="eighty"');
    expect(await w.readConfig()).to.equal(before);
    expect(existsSync(`${w.configFile}.bak`)).to.equal(false);
  });

  it('refuses a save without the CSRF token (403) and changes nothing', async () => {
    const before = await w.readConfig();
    const fields = formFields(page);
    fields.delete('_csrf');
    fields.set('botName', 'Forged');
    expect((await save(fields)).status).to.equal(403);
    fields.set('_csrf', 'another-sessions-token');
    const res = await save(fields);
    expect(res.status).to.equal(403);
    expect(res.body).to.contain('CSRF');
    expect(await w.readConfig()).to.equal(before);
  });

  it('refuses oversized and malformed bodies with the right status', async () => {
    const before = await w.readConfig();
    const big = formFields(page);
    big.set('botName', 'x'.repeat(300 * 1024));
    expect((await save(big)).status).to.equal(413);
    const json = await save(formFields(page), { 'content-type': 'application/json' });
    expect(json.status).to.equal(415);
    const bad = await request(w.port, { method: 'POST', path: '/config/save', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from([0xff, 0xfe, 0x3d]).toString('latin1') });
    expect(bad.status).to.be.oneOf([400, 403]);
    expect(await w.readConfig()).to.equal(before);
  });

  it('lets only one of two concurrent saves from the same page win (409 for the other)', async () => {
    const a = formFields(page);
    a.set('botName', 'First');
    const b = formFields(page);
    b.set('botName', 'Second');
    const results = await Promise.all([save(a), save(b)]);
    expect(results.map((r) => r.status).sort()).to.deep.equal([303, 409]);
    const winner = results[0]?.status === 303 ? 'First' : 'Second';
    expect(JSON.parse(await w.readConfig()).botName).to.equal(winner);
    expect(results.find((r) => r.status === 409)?.body).to.contain('changed after this page was loaded');
  });

  it('adds the bot\'s own id to targetUserIds with one click', async () => {
    const fields = formFields(page);
    fields.set('addOwnId', BOT_LID);
    expect((await save(fields)).status).to.equal(303);
    expect(JSON.parse(await w.readConfig()).targetUserIds).to.deep.equal([BOT_LID]);
    const again = await request(w.port, { path: '/config', headers: { cookie } });
    expect(again.body).to.contain('✔ in the list');
  });

  it('says a port change needs a restart', async () => {
    const fields = formFields(page);
    fields.set('port', '8089');
    const res = await save(fields);
    expect(res.headers.location).to.equal('/config?saved=1&restart=1');
    const after = await request(w.port, { path: res.headers.location ?? '', headers: { cookie } });
    expect(after.body).to.contain('takes effect after a restart');
    expect(JSON.parse(await w.readConfig()).port).to.equal(8089);
  });

  it('keeps the version check honest after a save (an old page cannot overwrite)', async () => {
    const first = formFields(page);
    first.set('prefix', '!');
    expect((await save(first)).status).to.equal(303);
    const stale = formFields(page);
    stale.set('prefix', '#');
    expect((await save(stale)).status).to.equal(409);
    const fresh = await request(w.port, { path: '/config', headers: { cookie } });
    expect(versionOf(fresh.body)).not.to.equal(versionOf(page));
    expect(JSON.parse(await w.readConfig()).prefix).to.equal('!');
  });
});

describe('QR page', () => {
  it('shows the QR while the session waits for a scan', async () => {
    const w = await startWebTest({ plugins: [pingPlugin] });
    try {
      const state: SessionState = { status: 'qr', qr: '2@abcdefghijklmnop,qrstuvwxyz,0123456789' };
      (w.t.transport as unknown as { session: () => SessionState }).session = () => state;
      const res = await request(w.port, { path: '/' });
      expect(res.status).to.equal(200);
      expect(res.body).to.contain('<svg').and.contain('Linked devices');
      expect(res.headers['cache-control']).to.equal('no-store');
    } finally {
      await w.stop();
    }
  });
});

describe('status page while WhatsApp is unreachable', () => {
  it('says why and when the next try is, and shows a pairing code', async () => {
    const w = await startWebTest({ plugins: [pingPlugin] });
    try {
      const retryAt = Date.now() + 60_000;
      const state: SessionState = { status: 'connecting', lastError: 'getaddrinfo ENOTFOUND web.whatsapp.com', retryAt, pairingCode: 'ABCD1234', pairingCodeExpiresAt: Date.now() + 95_000 };
      (w.t.transport as unknown as { session: () => SessionState }).session = () => state;
      const res = await request(w.port, { path: '/' });
      expect(res.status).to.equal(200);
      expect(res.body).to.contain('Cannot reach WhatsApp: getaddrinfo ENOTFOUND web.whatsapp.com');
      expect(res.body).to.contain(formatTime(retryAt));
      expect(res.body).to.contain('Pairing code: <b class="code">ABCD1234</b>');
      // The time left to type it (rounded: the page is made a moment after the state).
      expect(res.body).to.match(/type it within 1 min 3[45] s/);
    } finally {
      await w.stop();
    }
  });
});

describe('dashboard page content', () => {
  it('escapes plugin texts and shows a plugin that is off by default as off', async () => {
    const hostile = definePlugin({ name: 'hostile', description: '<img src=x onerror=alert(1)>', enabledByDefault: false, setup: () => ({ commands: [{ command: 'hostile', run: () => undefined }] }) });
    const w = await startWebTest({ token: TOKEN, plugins: [pingPlugin, hostile] });
    try {
      const { page } = await login(w.port, TOKEN);
      expect(page).to.contain('&lt;img src=x onerror=alert(1)&gt;').and.not.contain('<img src=x');
      expect(page).to.contain('name="plugin:hostile:enabled">').and.contain('name="plugin:ping:enabled" checked');
    } finally {
      await w.stop();
    }
  });
});
