import { expect } from 'chai';
import { mkdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import pingPlugin from '../../plugins/ping/index.js';
import { FakeGateway } from '../fakes/openai-gateway.js';
import { ROOT } from '../helpers/checkout.js';
import { storedDocuments } from '../helpers/disk-text.js';
import { SHIPPED_RULES } from './access-helpers.js';
import { overflowsHorizontally, seriousA11yViolations, sharedBrowser } from './browser.js';
import { startWebTest, TOKEN, type WebTest } from './web-helpers.js';

const ARTIFACTS = path.join(ROOT, 'dist', 'artifacts');
const STRANGER = '62811111111@s.whatsapp.net';
const PAUSED = '62844444444@s.whatsapp.net';
const GROUP = '120363000000000002@g.us';
const MEMBER = '62822222222@s.whatsapp.net';
const SCRIPT_PERSONA = '</textarea><script>window.pwned = true</script><img src=x onerror="window.pwned = true"> Answer in rhymes.';

describe('dashboard access view in headless Chromium', function () {
  this.timeout(60_000);
  let gw: FakeGateway;
  let w: WebTest;
  let phone: BrowserContext;
  let page: Page;
  let code = '';
  const dialogs: string[] = [];

  const state = async () => {
    await w.t.app.bot.access.flush();
    // Kept in the store database (the core's access document).
    return storedDocuments(path.join(w.t.dir, 'data'), 'core', 'access')[''] as any;
  };

  before(async () => {
    gw = await FakeGateway.start('model');
    w = await startWebTest({ token: TOKEN, plugins: [pingPlugin], config: SHIPPED_RULES, env: { API_KEY: 'k-access-browser', BASE_URL: gw.url, MODEL: 'm' } });
    await mkdir(ARTIFACTS, { recursive: true });
    // Something in every section: a waiting stranger (with a name that is markup), a group, a persona, a paused chat.
    const answer = (await w.t.transport.push({ senderId: STRANGER, senderName: '<b>Sari</b>', text: 'what are your opening hours?' })).find((a) => a.type === 'text');
    code = /pairing code is ([A-Z0-9]+)/.exec(answer?.type === 'text' ? answer.text : '')?.[1] ?? '';
    expect(code).to.have.length.greaterThan(5);
    await w.t.app.bot.access.setActivation(GROUP, 'mention', '10000000001@s.whatsapp.net');
    await w.t.app.bot.access.pause(PAUSED, null, 'phone');
    phone = await (await sharedBrowser()).newContext({ viewport: { width: 390, height: 844 } });
    page = await phone.newPage();
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`${w.base}/config/login`);
    await page.fill('#token', TOKEN);
    await Promise.all([page.waitForURL(`${w.base}/config`), page.click('button[type=submit]')]);
  });
  after(async () => {
    await phone?.close();
    await w?.stop();
    await gw?.close();
  });

  for (const width of [390, 1280]) {
    it(`at ${width} px wide: every section shown, no horizontal scrolling, no serious accessibility problem, no CSP refusal`, async () => {
      const context = width === 390 ? phone : await (await sharedBrowser()).newContext({ viewport: { width, height: 900 } });
      try {
        if (context !== phone) await context.addCookies(await phone.cookies());
        const view = context === phone ? page : await context.newPage();
        const errors: string[] = [];
        view.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
        await view.goto(`${w.base}/config/access`);
        expect(await view.textContent('h2.view-title')).to.equal('Access');
        expect(await view.getAttribute('nav a[href="/config/access"]', 'aria-current')).to.equal('page');
        expect(await view.textContent(`#pending [data-code="${code}"]`)).to.contain('<b>Sari</b>').and.contain('what are your opening hours?');
        expect(await view.inputValue(`#groups [data-chat="${GROUP}"] select`)).to.equal('mention');
        expect(await view.textContent(`#paused [data-chat="${PAUSED}"]`)).to.contain('until .bot on');
        expect(await overflowsHorizontally(view), 'horizontal scrolling').to.equal(false);
        expect(await seriousA11yViolations(view)).to.deep.equal([]);
        await view.screenshot({ path: path.join(ARTIFACTS, `dashboard-access-${width}.png`), fullPage: true });
        expect(errors.filter((e) => /Content Security Policy|Refused/.test(e)), 'CSP refusals').to.deep.equal([]);
      } finally {
        if (context !== phone) await context.close();
        else page.removeAllListeners('console');
      }
    });
  }

  it('refuses a cross-site form post to approve (403): the stranger stays out', async () => {
    const attacker = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<form id="f" method="post" action="${w.base}/config/access/approve"><input name="code" value="${code}"></form><script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      const attackPage = await phone.newPage();
      const response = attackPage.waitForResponse((r) => r.url() === `${w.base}/config/access/approve`);
      // localhost and 127.0.0.1 are different sites to the browser.
      await attackPage.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`);
      expect((await response).status()).to.equal(403);
      await attackPage.close();
    } finally {
      attacker.close();
    }
    expect(w.t.app.bot.access.pending().map((p) => p.code)).to.deep.equal([code]);
    expect(gw.chats()).to.have.length(0);
  });

  it('approving from the dashboard lets the stranger in and answers the held message', async () => {
    await page.goto(`${w.base}/config/access`);
    expect(gw.chats()).to.have.length(0);
    await Promise.all([page.waitForURL(/done=approved/), page.click(`button[aria-label="Approve ${code}"]`)]);
    expect(await page.textContent('#notice')).to.contain('Approved: +62811111111 can talk to the bot now. Answering the 1 message');
    expect(await page.textContent('#approved')).to.contain('+62811111111');
    expect(await page.locator(`[data-code="${code}"]`).count()).to.equal(0);
    await w.t.until(() => w.t.transport.texts().includes('model: what are your opening hours?'));
    expect(gw.chats()).to.have.length(1);
    expect(JSON.stringify(gw.chats()[0]?.json)).to.contain('what are your opening hours?');
  });

  it('changes a group activation with the select; it persists and applies', async () => {
    await page.goto(`${w.base}/config/access`);
    await page.selectOption(`#groups [data-chat="${GROUP}"] select`, 'always');
    await Promise.all([page.waitForURL(/done=activation/), page.click(`button[aria-label="Save activation of ${GROUP}"]`)]);
    await page.reload();
    expect(await page.inputValue(`#groups [data-chat="${GROUP}"] select`)).to.equal('always');
    expect((await state()).groups[GROUP]).to.include({ mode: 'always', by: 'dashboard' });
    const answered = await w.t.transport.push({ chatId: GROUP, senderId: MEMBER, text: 'no mention at all' });
    expect(answered.some((a) => a.type === 'text' && a.text.includes('no mention at all'))).to.equal(true);
  });

  it('a persona that is markup is saved as typed and shown as text, never run', async () => {
    await page.goto(`${w.base}/config/access`);
    await page.fill('#new-persona input[name="chat"]', '62811111111');
    await page.fill('#new-persona textarea', SCRIPT_PERSONA);
    await Promise.all([page.waitForURL(/done=persona/), page.click('#new-persona button[type=submit]')]);
    const card = `#personas [data-chat="${STRANGER}"]`;
    expect(await page.inputValue(`${card} textarea`)).to.equal(SCRIPT_PERSONA);
    expect(await page.locator('#personas script, #personas img').count()).to.equal(0);
    expect(await page.evaluate(() => (window as unknown as { pwned?: boolean }).pwned)).to.equal(undefined);
    expect(dialogs).to.deep.equal([]);
    expect(w.t.app.bot.access.persona(STRANGER)).to.equal(SCRIPT_PERSONA);
    expect(await seriousA11yViolations(page)).to.deep.equal([]);
  });

  it('hands a paused chat back to the bot', async () => {
    await page.goto(`${w.base}/config/access`);
    await Promise.all([page.waitForURL(/done=resumed/), page.click(`button[aria-label="Hand back ${PAUSED} to the bot"]`)]);
    expect(await page.textContent('#paused')).to.contain('not paused in any chat');
    expect(w.t.app.bot.access.pausedUntil(PAUSED)).to.equal(undefined);
  });
});
