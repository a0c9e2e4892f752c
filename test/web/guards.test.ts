import { expect } from 'chai';
import { definePlugin, Type } from '../../core/index.js';
import { LoginLimiter, SessionStore, tokenMatches } from '../../web/dashboard/auth.js';
import { formToConfig, idList } from '../../web/dashboard/config-form.js';
import { html } from '../../web/html.js';
import { crossSiteReason, hostAllowed, hostKind } from '../../web/security.js';
import { weakTokenReason } from '../../web/server.js';

const rules = { bindHost: '127.0.0.1', publicBaseUrl: '', extraHosts: [] };

describe('web guards', () => {
  it('accepts only expected Host names, with the port the request came in on', () => {
    expect(hostAllowed('127.0.0.1:3000', 3000, rules)).to.equal(true);
    expect(hostAllowed('localhost:3000', 3000, rules)).to.equal(true);
    expect(hostAllowed('[::1]:3000', 3000, rules)).to.equal(true);
    expect(hostAllowed('localhost', 80, rules)).to.equal(true);
    expect(hostAllowed('localhost', 3000, rules)).to.equal(false);
    expect(hostAllowed('127.0.0.1:3001', 3000, rules)).to.equal(false);
    expect(hostAllowed('attacker.example:3000', 3000, rules)).to.equal(false);
    expect(hostAllowed('127.0.0.1:3000@evil', 3000, rules)).to.equal(false);
    expect(hostAllowed('192.168.1.5:3000', 3000, { ...rules, bindHost: '192.168.1.5' })).to.equal(true);
    expect(hostAllowed('192.168.1.5:3000', 3000, { ...rules, bindHost: '0.0.0.0' })).to.equal(false);
    expect(hostKind('sites.example.org', 3000, { ...rules, publicBaseUrl: 'https://sites.example.org' })).to.equal('public');
    expect(hostKind('localhost:3000', 3000, { ...rules, publicBaseUrl: 'https://sites.example.org' })).to.equal('local');
    expect(hostAllowed('sites.example.org:8443', 3000, { ...rules, publicBaseUrl: 'https://sites.example.org' })).to.equal(false);
    expect(hostAllowed('bot.lan:3000', 3000, { ...rules, extraHosts: ['bot.lan'] })).to.equal(true);
    expect(hostAllowed('bot.lan:9999', 3000, { ...rules, extraHosts: ['bot.lan:9999'] })).to.equal(true);
  });

  it('refuses cross-site writes and lets reads and same-origin writes through', () => {
    const host = '127.0.0.1:3000';
    expect(crossSiteReason('GET', { origin: 'https://evil.example', host })).to.equal(undefined);
    expect(crossSiteReason('POST', { origin: 'http://127.0.0.1:3000', host })).to.equal(undefined);
    expect(crossSiteReason('POST', { secFetchSite: 'same-origin', origin: 'null', host })).to.equal(undefined);
    expect(crossSiteReason('POST', { host })).to.equal(undefined);
    expect(crossSiteReason('POST', { origin: 'http://localhost:3000', host })).to.be.a('string');
    expect(crossSiteReason('DELETE', { secFetchSite: 'cross-site', host })).to.be.a('string');
    expect(crossSiteReason('POST', { secFetchSite: 'same-site', origin: 'http://127.0.0.1:3000', host })).to.be.a('string');
    expect(crossSiteReason('PUT', { origin: 'null', host })).to.be.a('string');
    expect(crossSiteReason('POST', { origin: '::::', host })).to.be.a('string');
  });

  it('compares tokens exactly', () => {
    expect(tokenMatches('abc', 'abc')).to.equal(true);
    expect(tokenMatches('abd', 'abc')).to.equal(false);
    expect(tokenMatches('abc ', 'abc')).to.equal(false);
    expect(tokenMatches('', '')).to.equal(false);
  });

  it('expires sessions when idle and after the absolute limit', () => {
    let now = 0;
    const store = new SessionStore({ idleMs: 1000, absoluteMs: 5000, max: 2 }, () => now);
    const a = store.create();
    now = 900;
    expect(store.get(a.id)).to.equal(a);
    now = 2000;
    expect(store.get(a.id)).to.equal(undefined);
    const b = store.create();
    for (now = 2500; now < 7000; now += 800) expect(store.get(b.id), `at ${now}`).to.equal(b);
    now = 7100;
    expect(store.get(b.id)).to.equal(undefined);
    const [c, d, e] = [store.create(), store.create(), store.create()];
    expect(store.get(c.id)).to.equal(undefined);
    expect(store.get(d.id)).to.equal(d);
    expect(store.get(e.id)).to.equal(e);
    expect(d.csrf).not.to.equal(e.csrf);
  });

  it('slows logins after wrong tokens per address and globally, doubling up to the cap, and forgets after the window', () => {
    let now = 0;
    const limits = { freePerAddress: 2, freeGlobal: 4, windowMs: 10_000, baseDelayMs: 1000, maxDelayMs: 8000, maxPending: 4 };
    const limiter = new LoginLimiter(limits, () => now);
    expect(limiter.fail('1.1.1.1')).to.deep.equal({ failures: 1, globalFailures: 1, nextDelayMs: 0 });
    expect(limiter.fail('1.1.1.1').nextDelayMs).to.equal(0);
    expect(limiter.fail('1.1.1.1').nextDelayMs).to.equal(1000);
    expect(limiter.fail('1.1.1.1').nextDelayMs).to.equal(2000);
    // Another address is slowed too once all addresses together are over their free failures.
    expect(limiter.delayMs('2.2.2.2')).to.equal(0);
    expect(limiter.fail('2.2.2.2')).to.deep.equal({ failures: 1, globalFailures: 5, nextDelayMs: 1000 });
    expect(limiter.delayMs('3.3.3.3')).to.equal(1000);
    for (let i = 0; i < 20; i++) limiter.fail(`10.0.0.${i}`);
    // Capped: even after many failures, the right token waits at most maxDelayMs.
    expect(limiter.delayMs('9.9.9.9')).to.equal(8000);
    now = 10_001;
    expect(limiter.delayMs('1.1.1.1')).to.equal(0);
    expect(limiter.failures('1.1.1.1')).to.deep.equal({ address: 0, global: 0 });
    limiter.fail('4.4.4.4');
    limiter.succeed('4.4.4.4');
    expect(limiter.failures('4.4.4.4')).to.deep.equal({ address: 0, global: 0 });
  });

  it('admits at most maxPending waiting attempts and says when to retry', async () => {
    const waits: Array<() => void> = [];
    const limiter = new LoginLimiter({ freePerAddress: 0, freeGlobal: 0, windowMs: 60_000, baseDelayMs: 500, maxDelayMs: 4000, maxPending: 2 }, Date.now, () => new Promise<void>((r) => waits.push(r)));
    limiter.fail('a');
    const first = limiter.admit('a');
    const second = limiter.admit('b');
    expect(await limiter.admit('c')).to.deep.equal({ admitted: false, retryAfterMs: 1000 });
    waits.forEach((w) => w());
    expect(await first).to.deep.equal({ admitted: true, waitedMs: 500 });
    expect(await second).to.deep.equal({ admitted: true, waitedMs: 500 });
    limiter.release();
    const third = limiter.admit('c');
    waits.at(-1)!();
    expect((await third).admitted).to.equal(true);
  });

  it('warns about a CONFIG_TOKEN shorter than 64 hex characters', () => {
    expect(weakTokenReason('')).to.equal(undefined);
    expect(weakTokenReason('x'.repeat(63))).to.match(/shorter than 64/);
    expect(weakTokenReason('ab'.repeat(32))).to.equal(undefined);
  });

  it('escapes everything interpolated into pages', () => {
    const evil = `<script>alert("x")</script>' onload='`;
    expect(html`<p title="${evil}">${evil}</p>`.value).to.equal('<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onload=&#39;</p>');
  });

  it('reads id lists forgivingly and checks plugin options with the plugin\'s schema', () => {
    expect(idList(' 628123,\n+628124  628125@s.whatsapp.net 628126:3@s.whatsapp.net 628123 ')).to.deep.equal(['628123', '628124', '628125', '628126']);
    const typed = definePlugin({
      name: 'typed',
      description: 'has options',
      options: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1 })) }, { additionalProperties: false }),
      setup: () => ({}),
    });
    const base = { prefix: '.', botName: 'B', targetUserIds: [], port: 0, plugins: { typed: { enabled: true, limit: 3 }, gone: { enabled: false, x: 1 } } };
    // Options are edited field by field on the plugin's card: a whole-JSON options field (hand-written by a script,
    // one typo away from replacing every option) is not read at all, whatever it holds.
    const form = new URLSearchParams({ prefix: '.', botName: 'B', port: '0', host: '127.0.0.1', 'plugin:typed:present': '1', 'plugin:typed:enabled': 'on', 'plugin:typed:access': 'list', 'plugin:typed:ids': '628123' });
    for (const json of ['{"limit": 0, "extra": true}', '{"limit": 7}', '{"enabled": false}', '{"broken": ']) {
      form.set('plugin:typed:options', json);
      const read = formToConfig(form, base, [typed]);
      expect(read.problems, json).to.deep.equal([]);
      expect(read.config.plugins, json).to.deep.equal({ typed: { enabled: true, access: ['628123'], limit: 3 }, gone: { enabled: false, x: 1 } });
    }
  });
});

describe('dashboard field errors', () => {
  it('says what is wrong with a field in words', () => {
    const form = new URLSearchParams({ prefix: '. .', botName: 'B', port: '70000', host: '127.0.0.1' });
    const { problems } = formToConfig(form, { prefix: '.', botName: 'B', targetUserIds: [], port: 0 }, []);
    expect(problems).to.deep.equal([
      { field: 'prefix', message: 'prefix: must not contain spaces' },
      { field: 'port', message: 'port: must be <= 65535' },
    ]);
  });
});
