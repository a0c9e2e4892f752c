import { expect } from 'chai';
import pingPlugin from '../../plugins/ping/index.js';
import { startWebServer, type WebServer } from '../../web/server.js';
import { startTestBot, type TestBot } from '../../app/testing/index.js';
import { cleanup, link, setup, type Harness } from '../core/whatsapp/harness.js';
import { csrfOf, login, request, sameOrigin, startWebTest, TOKEN } from './web-helpers.js';

/** The dashboard's app with the real WhatsApp transport on a fake socket (QR offered, nothing linked yet). */
async function whatsAppDashboard(): Promise<{ t: TestBot; h: Harness; web: WebServer; cookie: string }> {
  const t = await startTestBot([pingPlugin], { env: { CONFIG_TOKEN: TOKEN }, config: { port: 0 } });
  const h = await setup();
  await h.sockets.waitForSockets(1);
  const web = await startWebServer(t.app, () => h.transport);
  const { cookie } = await login(web.port, TOKEN);
  return { t, h, web, cookie };
}

describe('dashboard: linking with a pairing code, and relink only with a session', function () {
  this.timeout(30_000);
  let t: TestBot | undefined;
  let web: WebServer | undefined;
  afterEach(async () => {
    await web?.close();
    await t?.stop();
    await cleanup();
    web = undefined;
    t = undefined;
  });

  it('asks WhatsApp for a pairing code for the number typed on the status view and shows the code; no relink while nothing is linked', async () => {
    const d = await whatsAppDashboard();
    ({ t, web } = d);
    d.h.sockets.last.qr();
    const status = (await request(web.port, { path: '/config/status', headers: { cookie: d.cookie } })).body;
    expect(status).to.contain('id="pairing"').and.contain('name="phone"');
    expect(status).not.to.contain('id="relink"');
    const home = (await request(web.port, { path: '/' })).body;
    expect(home).to.contain('href="/config/status#pairing"');

    const body = new URLSearchParams({ _csrf: csrfOf(status), phone: '+62 812-3456-7890' }).toString();
    const res = await request(web.port, { method: 'POST', path: '/config/status/pairing-code', headers: { cookie: d.cookie, ...sameOrigin(web.port) }, body });
    expect(res.status).to.equal(303);
    expect(d.h.sockets.last.pairingRequests).to.deep.equal(['6281234567890']);
    const after = (await request(web.port, { path: res.headers.location!, headers: { cookie: d.cookie } })).body;
    expect(after).to.contain('Pairing code: <b class="code">ABCD1234</b>').and.contain('Link with phone number instead');

    const bad = await request(web.port, { method: 'POST', path: '/config/status/pairing-code', headers: { cookie: d.cookie, ...sameOrigin(web.port) }, body: new URLSearchParams({ _csrf: csrfOf(status), phone: 'call me' }).toString() });
    expect(bad.status).to.equal(422);
    expect(bad.body).to.contain('not a phone number');
    expect(d.h.sockets.last.pairingRequests).to.have.length(1);
  });

  it('refuses a pairing request without the session, its CSRF token or from another site: WhatsApp is asked nothing', async () => {
    const d = await whatsAppDashboard();
    ({ t, web } = d);
    d.h.sockets.last.qr();
    const status = (await request(web.port, { path: '/config/status', headers: { cookie: d.cookie } })).body;
    const body = (csrf: string) => new URLSearchParams({ _csrf: csrf, phone: '6281234567890' }).toString();
    const path = '/config/status/pairing-code';
    expect((await request(web.port, { method: 'POST', path, headers: sameOrigin(web.port), body: body(csrfOf(status)) })).status).to.equal(401);
    expect((await request(web.port, { method: 'POST', path, headers: { cookie: d.cookie, ...sameOrigin(web.port) }, body: body('forged') })).status).to.equal(403);
    expect((await request(web.port, { method: 'POST', path, headers: { cookie: d.cookie, origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' }, body: body(csrfOf(status)) })).status).to.equal(403);
    expect(d.h.sockets.last.pairingRequests).to.deep.equal([]);
  });

  it('once linked, offers relink and no pairing code; a pairing request then says why it is refused', async () => {
    const d = await whatsAppDashboard();
    ({ t, web } = d);
    await link(d.h);
    const status = (await request(web.port, { path: '/config/status', headers: { cookie: d.cookie } })).body;
    expect(status).to.contain('id="relink"').and.not.contain('id="pairing"');
    const res = await request(web.port, { method: 'POST', path: '/config/status/pairing-code', headers: { cookie: d.cookie, ...sameOrigin(web.port) }, body: new URLSearchParams({ _csrf: csrfOf(status), phone: '6281234567890' }).toString() });
    expect(res.status).to.equal(422);
    expect(res.body).to.contain('linked already');
  });

  it('a transport without a link (memory) says a pairing code is not available, and hides relink once its session is gone', async () => {
    const w = await startWebTest({ token: TOKEN, plugins: [pingPlugin] });
    try {
      const { cookie } = await login(w.port, TOKEN);
      const linked = (await request(w.port, { path: '/config/status', headers: { cookie } })).body;
      expect(linked).to.contain('id="relink"');
      await w.t.transport.relink();
      const unlinked = (await request(w.port, { path: '/config/status', headers: { cookie } })).body;
      expect(unlinked).not.to.contain('id="relink"');
      expect(unlinked).to.contain('Linking with a phone number (pairing code) is not available with this transport.');
      const res = await request(w.port, { method: 'POST', path: '/config/status/pairing-code', headers: { cookie, ...sameOrigin(w.port) }, body: new URLSearchParams({ _csrf: csrfOf(unlinked), phone: '6281234567890' }).toString() });
      expect(res.status).to.equal(409);
      expect(res.body).to.contain('not available with the memory transport');
    } finally {
      await w.stop();
    }
  });
});
