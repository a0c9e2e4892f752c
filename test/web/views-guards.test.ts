import { expect } from 'chai';
import pingPlugin from '../../plugins/ping/index.js';
import { csrfOf, login, request, sameOrigin, startWebTest, TOKEN, type WebTest } from './web-helpers.js';

describe('dashboard v2 views keep the guards', () => {
  let w: WebTest;
  let cookie: string;
  beforeEach(async () => {
    w = await startWebTest({ token: TOKEN, plugins: [pingPlugin] });
    ({ cookie } = await login(w.port, TOKEN));
  });
  afterEach(() => w.stop());

  it('every view and live stream needs the session', async () => {
    for (const path of ['/config/status', '/config/providers', '/config/usage', '/config/plugins', '/config/log']) {
      const res = await request(w.port, { path });
      expect(res.status, path).to.equal(303);
      expect(res.headers.location).to.equal('/config/login');
    }
    for (const path of ['/config/events?view=usage', '/config/log/stream?level=info']) {
      expect((await request(w.port, { path })).status, path).to.equal(401);
    }
    const page = await request(w.port, { path: '/config/status', headers: { cookie } });
    expect(page.status).to.equal(200);
    expect(page.body).to.contain('<script src="/config/assets/dashboard.js" defer></script>');
    expect(page.body).not.to.match(/<script>|<script [^>]*>[^<]/);
    expect(page.headers['content-security-policy']).to.match(/script-src 'self'; connect-src 'self';/);
  });

  it('a relink without the CSRF token, or from another site, changes nothing', async () => {
    const noToken = await request(w.port, { method: 'POST', path: '/config/status/relink', headers: { cookie, ...sameOrigin(w.port) }, body: 'confirm=yes' });
    expect(noToken.status).to.equal(403);
    const page = await request(w.port, { path: '/config/status', headers: { cookie } });
    const body = new URLSearchParams({ _csrf: csrfOf(page.body), confirm: 'yes' }).toString();
    const crossSite = await request(w.port, { method: 'POST', path: '/config/status/relink', headers: { cookie, origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' }, body });
    expect(crossSite.status).to.equal(403);
    expect(w.t.transport.relinks).to.equal(0);
    const ok = await request(w.port, { method: 'POST', path: '/config/status/relink', headers: { cookie, ...sameOrigin(w.port) }, body });
    expect(ok.status).to.equal(303);
    expect(w.t.transport.relinks).to.equal(1);
  });

  it('a relink POST without the confirmation does nothing but ask, and the question says a fresh link has no privacy tokens', async () => {
    const page = await request(w.port, { path: '/config/status', headers: { cookie } });
    const unconfirmed = await request(w.port, { method: 'POST', path: '/config/status/relink', headers: { cookie, ...sameOrigin(w.port) }, body: new URLSearchParams({ _csrf: csrfOf(page.body) }).toString() });
    expect(unconfirmed.status).to.equal(200);
    expect(w.t.transport.relinks).to.equal(0);
    expect(w.t.transport.session().status).to.equal('linked');
    const warning = /<p id="fresh-link-warning"[^>]*>([\s\S]*?)<\/p>/.exec(unconfirmed.body)?.[1] ?? '';
    expect(warning).to.contain('no privacy tokens');
    expect(warning).to.contain('463');
    expect(unconfirmed.body).to.contain('name="confirm" value="yes"');
  });

  it('limits: a bad number is refused with the field named; a good one is saved and applied', async () => {
    const page = await request(w.port, { path: '/config/usage', headers: { cookie } });
    const fields = { _csrf: csrfOf(page.body), requestsPerMinute: '5', tokensPerDay: 'lots', premiumTokensPerDay: '0', quotaMainTokens: '100', quotaPremiumTokens: '0' };
    const before = await w.readConfig();
    const bad = await request(w.port, { method: 'POST', path: '/config/usage/limits', headers: { cookie, ...sameOrigin(w.port) }, body: new URLSearchParams(fields).toString() });
    expect(bad.status).to.equal(422);
    expect(bad.body).to.contain('tokensPerDay: must be a whole number');
    expect(await w.readConfig()).to.equal(before);
    const good = await request(w.port, { method: 'POST', path: '/config/usage/limits', headers: { cookie, ...sameOrigin(w.port) }, body: new URLSearchParams({ ...fields, tokensPerDay: '777' }).toString() });
    expect(good.status).to.equal(303);
    expect(JSON.parse(await w.readConfig()).ai).to.include({ requestsPerMinute: 5, tokensPerDay: 777, quotaMainTokens: 100 });
    expect(w.t.app.bot.config.ai.tokensPerDay).to.equal(777);
  });
});
