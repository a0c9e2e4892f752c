import { expect } from 'chai';
import pingPlugin from '../../plugins/ping/index.js';
import sinon from 'sinon';
import { DEFAULT_LOGIN_LIMITS, FailedLogins, LoginLimiter } from '../../web/dashboard/auth.js';
import { cookieHeader, csrfOf, login, request, sameOrigin, startWebTest, TOKEN, type WebTest } from './web-helpers.js';

const SUMMARY_MS = 500;

/** Log lines about failed logins: the one written at once and the periodic summaries. */
function failureLines(w: WebTest) {
  return w.t.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('dashboard login fail'));
}


describe('dashboard login under a flood of wrong tokens from local processes', function () {
  this.timeout(120_000);
  let w: WebTest;
  before(async () => {
    // The default limits, with a shorter longest wait so the flood's last answers come back soon after it stops.
    const limiter = new LoginLimiter({ ...DEFAULT_LOGIN_LIMITS, maxDelayMs: 2000 });
    w = await startWebTest({ token: TOKEN, plugins: [pingPlugin], web: { dashboard: { limiter, failureSummaryMs: SUMMARY_MS } } });
  });
  after(() => w.stop());

  it('the right token gets in while the flood goes on, and the log gets one line plus a summary per period', async () => {
    const started = Date.now();
    const form = await request(w.port, { path: '/config/login' });
    const cookie = cookieHeader(form.setCookies);
    const body = (token: string) => new URLSearchParams({ _csrf: csrfOf(form.body), token }).toString();
    const statuses = new Map<number, number>();
    let sent = 0;
    let stop = false;
    /** Guessers waiting for a number of answers, woken as answers come. */
    const watchers = new Set<() => void>();
    const answered = (count: number) =>
      new Promise<void>((resolve) => {
        const watcher = () => sent >= count && (watchers.delete(watcher), resolve());
        watchers.add(watcher);
        watcher();
      });
    // 24 local processes' worth of guessers, each on its own 127.0.0.x address, as fast as the server answers.
    const workers = Array.from({ length: 24 }, async (_, i) => {
      for (let n = 0; !stop; n++) {
        const res = await request(w.port, { method: 'POST', path: '/config/login', localAddress: `127.0.${1 + (i >> 7)}.${2 + ((i * 7 + n) % 120)}`, headers: { cookie, ...sameOrigin(w.port) }, body: body(`guess-${i}-${n}`) });
        sent++;
        for (const watcher of [...watchers]) watcher();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    });
    await answered(300);
    const before = sent;
    // The owner logs in with the right token in the middle of it (login() throws unless it is let in).
    const owner = await login(w.port, TOKEN);
    const during = sent - before;
    await answered(before + during + 300);
    stop = true;
    await Promise.all(workers);
    const elapsedMs = Date.now() - started;

    expect(during, 'wrong tokens answered while the owner logged in').to.be.greaterThan(0);
    const dashboard = await request(w.port, { path: '/config', headers: { cookie: owner.cookie } });
    expect(dashboard.status).to.equal(200);
    // Every guess was refused (401 after its wait, or 429 at once while too many waited), none let in.
    expect([...statuses.keys()].sort()).to.deep.equal([401, 429]);

    // Nothing of the count is lost: once the last period is summarised, the lines add up to every wrong token.
    const counted = () => failureLines(w).reduce((sum, l) => sum + (l.msg.startsWith('dashboard login failed') ? 1 : Number(l.wrong) + Number(l.refused)), 0);
    await w.t.until(() => counted() >= sent);
    expect(counted()).to.equal(sent);
    const lines = failureLines(w);
    expect(lines[0]!.msg).to.equal('dashboard login failed: wrong token');
    // One line at once, then at most one summary per period (a new line at once only after a quiet period): bounded
    // by the time the flood lasted, not by its size.
    const periods = Math.floor((Date.now() - started) / SUMMARY_MS);
    expect(lines.length, `${lines.length} lines for ${sent} wrong tokens in ${elapsedMs} ms`).to.be.at.most(1 + periods);
    const summary = lines.find((l) => l.msg.startsWith('dashboard login failures'))!;
    expect(summary.msg).to.match(/^dashboard login failures: \d+ more wrong token\(s\) in the last 0\.5 s$/);
    expect(Object.keys(summary.addresses as object).length).to.be.within(1, 5);
    // No per-attempt lines of any other kind either.
    expect(w.t.logs().filter((l) => typeof l.msg === 'string' && /login/.test(l.msg) && !l.msg.startsWith('dashboard login fail')).map((l) => l.msg)).to.deep.equal(['dashboard login']);
  });

  it('after a quiet period the next wrong token is logged at once again (the summary period on a fake clock)', async () => {
    const clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now(), shouldClearNativeTimers: true });
    try {
      const lines: Array<{ msg: string } & Record<string, unknown>> = [];
      const failed = new FailedLogins((msg, detail) => lines.push({ msg, ...detail }), SUMMARY_MS);
      failed.record('127.0.0.5', 'wrong');
      failed.record('127.0.0.5', 'wrong');
      clock.tick(SUMMARY_MS);
      expect(lines.map((l) => l.msg)).to.deep.equal(['dashboard login failed: wrong token', 'dashboard login failures: 1 more wrong token(s) in the last 0.5 s']);
      // A whole period without a wrong token ends the summaries: the next one is a line of its own, at once.
      clock.tick(SUMMARY_MS);
      failed.record('127.0.0.77', 'wrong');
      expect(lines.slice(2).map((l) => [l.msg, l.ip])).to.deep.equal([['dashboard login failed: wrong token', '127.0.0.77']]);
      clock.tick(SUMMARY_MS * 3);
      expect(lines, 'nothing more to summarise').to.have.length(3);
    } finally {
      clock.restore();
    }
  });

  it('a wrong token on a dashboard nobody flooded is logged at once, with the address it came from', async () => {
    const quiet = await startWebTest({ token: TOKEN, plugins: [pingPlugin], web: { dashboard: { failureSummaryMs: SUMMARY_MS } } });
    try {
      const form = await request(quiet.port, { path: '/config/login' });
      const res = await request(quiet.port, { method: 'POST', path: '/config/login', localAddress: '127.0.0.77', headers: { cookie: cookieHeader(form.setCookies), ...sameOrigin(quiet.port) }, body: new URLSearchParams({ _csrf: csrfOf(form.body), token: 'wrong' }).toString() });
      expect(res.status).to.equal(401);
      expect(failureLines(quiet).map((l) => [l.msg, l.ip])).to.deep.equal([['dashboard login failed: wrong token', '127.0.0.77']]);
    } finally {
      await quiet.stop();
    }
  });
});
