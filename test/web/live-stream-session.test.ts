import { expect } from 'chai';
import pingPlugin from '../../plugins/ping/index.js';
import { SessionStore } from '../../web/dashboard/auth.js';
import { csrfOf, login, openStream, request, sameOrigin, startWebTest, TOKEN, type WebTest } from './web-helpers.js';

describe('live streams (server-sent events) end with the dashboard session', function () {
  this.timeout(60_000);
  let w: WebTest;
  afterEach(() => w.stop());

  it('the log stream and the live view stream open across a logout end at the logout and carry nothing after it', async () => {
    w = await startWebTest({ token: TOKEN, plugins: [pingPlugin] });
    const { cookie, page } = await login(w.port, TOKEN);
    const log = await openStream(w.port, '/config/log/stream?level=info', cookie);
    const live = await openStream(w.port, '/config/events?view=status', cookie);
    expect([log.status, live.status]).to.deep.equal([200, 200]);
    await live.waitFor('event: regions');
    w.t.app.log.warn('marker before the logout');
    await log.waitFor('marker before the logout');

    const out = await request(w.port, { method: 'POST', path: '/config/logout', headers: { cookie, ...sameOrigin(w.port) }, body: `_csrf=${encodeURIComponent(csrfOf(page))}` });
    expect(out.status).to.equal(303);
    await log.ended('the log stream after logout');
    await live.ended('the live view stream after logout');
    w.t.app.log.warn('marker after the logout');
    expect(log.text()).to.not.contain('marker after the logout');
    // The page's script is told, so it stops instead of reconnecting; a reconnect would be refused anyway.
    expect(log.text()).to.contain('event: session-ended');
    expect(live.text()).to.contain('event: session-ended');
    for (const path of ['/config/log/stream?level=info', '/config/events?view=status']) expect((await request(w.port, { path, headers: { cookie } })).status, path).to.equal(401);
  });

  it('streams end when the session expires while they are open, and an open stream does not keep the session alive', async () => {
    // The session store's clock is the test's: time moves only when the test says, however loaded the machine is.
    let now = Date.now();
    const readers: Array<() => void> = [];
    const clock = () => {
      readers.splice(0).forEach((r) => r());
      return now;
    };
    /** Resolves after the store has read the clock `n` more times (with the streams idle, only its sweeper reads it). */
    const reads = async (n: number) => {
      for (let i = 0; i < n; i++) await new Promise<void>((r) => readers.push(r));
    };
    const sessions = new SessionStore({ idleMs: 60_000, absoluteMs: 3_600_000, max: 50 }, clock, 10);
    w = await startWebTest({ token: TOKEN, plugins: [pingPlugin], web: { dashboard: { sessions } } });
    const { cookie } = await login(w.port, TOKEN);
    const log = await openStream(w.port, '/config/log/stream?level=info', cookie);
    const live = await openStream(w.port, '/config/events?view=usage', cookie);
    expect([log.status, live.status]).to.deep.equal([200, 200]);
    await live.waitFor('event: regions');
    // Three quarters of the idle time pass with both streams open: the session still lives, and the sweeps that look
    // at it meanwhile do not count as use.
    now += 45_000;
    await reads(3);
    expect(log.text() + live.text()).to.not.contain('session-ended');
    // Another half: 75 s since the owner last used the dashboard. The session idles out although both streams stayed
    // open, and they end with it.
    now += 30_000;
    await log.ended('the log stream after the session idled out');
    await live.ended('the live view stream after the session idled out');
    w.t.app.log.warn('marker after the expiry');
    expect(log.text()).to.not.contain('marker after the expiry');
    expect((await request(w.port, { path: '/config', headers: { cookie } })).status).to.equal(303);
  });
});
