import { expect } from 'chai';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { definePlugin, Type } from '../../core/index.js';
import pingPlugin from '../../plugins/ping/index.js';
import { FakeGateway } from '../fakes/openai-gateway.js';
import { ROOT } from '../helpers/checkout.js';
import { overflowsHorizontally, seriousA11yViolations, sharedBrowser } from './browser.js';
import { startWebTest, TOKEN, type WebTest } from './web-helpers.js';

/** Screenshots for the CI artifacts (dist/ is the repository's ignored output folder). */
const ARTIFACTS = path.join(ROOT, 'dist', 'artifacts');
const USER = '62855555555@s.whatsapp.net';

/** A plugin with typed options, for the options form built from its schema. */
const counter = definePlugin({
  name: 'counter',
  description: 'Counts things (dashboard test)',
  options: Type.Object(
    {
      step: Type.Integer({ minimum: 1, maximum: 10, default: 1, description: 'How much each count adds.' }),
      label: Type.Optional(Type.String({ minLength: 1, description: 'What is counted.' })),
      loud: Type.Boolean({ default: false, description: 'Shout the result.' }),
    },
    { additionalProperties: false },
  ),
  setup: () => ({ commands: [{ command: 'count', run: (ctx) => ctx.reply('1') }] }),
});

const VIEWS = [
  { path: '/config/status', title: 'Status' },
  { path: '/config/providers', title: 'Providers' },
  { path: '/config/usage', title: 'Usage' },
  { path: '/config/plugins', title: 'Plugins' },
  { path: '/config', title: 'Settings' },
  { path: '/config/log', title: 'Log' },
];

describe('dashboard v2 views in headless Chromium', function () {
  this.timeout(60_000);
  let gw: FakeGateway;
  let w: WebTest;
  let phone: BrowserContext;
  let page: Page;

  before(async () => {
    gw = await FakeGateway.start('second');
    w = await startWebTest({ token: TOKEN, plugins: [pingPlugin, counter], ownIds: ['62899999999@s.whatsapp.net'], env: { API_KEY: 'sk-dashboard-secret', BASE_URL: gw.url, MODEL: 'dash-model' } });
    await mkdir(ARTIFACTS, { recursive: true });
    phone = await (await sharedBrowser()).newContext({ viewport: { width: 390, height: 844 } });
    page = await phone.newPage();
    await page.goto(`${w.base}/config/login`);
    await page.fill('#token', TOKEN);
    await Promise.all([page.waitForURL(`${w.base}/config`), page.click('button[type=submit]')]);
  });
  after(async () => {
    await phone?.close();
    await w?.stop();
    await gw?.close();
  });

  for (const view of VIEWS) {
    it(`${view.title} at 390×844: fits without horizontal scrolling, no serious accessibility problem, no key`, async () => {
      const errors: string[] = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      await page.goto(`${w.base}${view.path}`);
      expect(await page.textContent('h2.view-title')).to.equal(view.title);
      expect(await page.getAttribute(`nav a[href="${view.path}"]`, 'aria-current')).to.equal('page');
      expect(await overflowsHorizontally(page), 'horizontal scrolling').to.equal(false);
      expect(await seriousA11yViolations(page)).to.deep.equal([]);
      expect(await page.content()).not.to.contain('sk-dashboard-secret');
      await page.screenshot({ path: path.join(ARTIFACTS, `dashboard-${view.title.toLowerCase()}-390.png`), fullPage: true });
      expect(errors.filter((e) => /Content Security Policy|Refused/.test(e)), 'CSP refusals').to.deep.equal([]);
      page.removeAllListeners('console');
    });
  }

  it('the usage view at 1280×900 (desktop) passes the same checks', async () => {
    const desktop = await (await sharedBrowser()).newContext({ viewport: { width: 1280, height: 900 } });
    try {
      await desktop.addCookies(await phone.cookies());
      const wide = await desktop.newPage();
      await wide.goto(`${w.base}/config/usage`);
      expect(await wide.textContent('h2.view-title')).to.equal('Usage');
      expect(await overflowsHorizontally(wide)).to.equal(false);
      expect(await seriousA11yViolations(wide)).to.deep.equal([]);
      await wide.screenshot({ path: path.join(ARTIFACTS, 'dashboard-usage-1280.png'), fullPage: true });
    } finally {
      await desktop.close();
    }
  });

  it('shows a message through the memory transport in usage without a reload', async () => {
    await page.goto(`${w.base}/config/usage`);
    expect(await page.textContent('#usage-models')).to.contain('No usage yet today');
    await page.evaluate(() => ((window as unknown as { stillHere: boolean }).stillHere = true));
    await w.t.transport.push({ senderId: USER, text: 'hello dashboard' });
    await page.waitForFunction(() => document.querySelector('#usage-models')?.textContent?.includes('dash-model'), undefined, { timeout: 10_000 });
    await page.waitForFunction(() => document.querySelector('#usage-users')?.textContent?.includes('62855555555'), undefined, { timeout: 10_000 });
    expect(await page.textContent('#usage-providers')).to.contain('second: 15 tokens');
    expect(await page.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere), 'same page, not reloaded').to.equal(true);
  });

  it('relink asks for confirmation first; cancel changes nothing, confirm logs out and shows the new QR', async () => {
    await page.goto(`${w.base}/config/status`);
    expect(await page.textContent('[data-region="link"]')).to.contain('Linked');
    await page.click('#relink');
    expect(await page.textContent('main')).to.contain('Log out of WhatsApp?');
    expect(await page.textContent('#fresh-link-warning')).to.contain('A fresh link starts with no privacy tokens');
    expect(w.t.transport.relinks).to.equal(0);
    await Promise.all([page.waitForURL(`${w.base}/config/status`), page.click('#cancel-relink')]);
    expect(w.t.transport.relinks).to.equal(0);
    await page.click('#relink');
    await Promise.all([page.waitForURL(/\/config\/status\?relinked=1$/), page.click('#confirm-relink')]);
    expect(w.t.transport.relinks).to.equal(1);
    expect(await page.textContent('#notice')).to.contain('Logged out of WhatsApp');
    expect(await page.isVisible('[data-region="link"] .qr svg')).to.equal(true);
    expect(await overflowsHorizontally(page)).to.equal(false);
  });

  it('an options form built from the plugin schema rejects a bad value and saves a good one', async () => {
    await page.goto(`${w.base}/config/plugins`);
    const card = '#plugin-counter';
    // Cards are collapsed: the owner opens the one to change.
    expect(await page.isVisible(`${card} #opt-counter-step`)).to.equal(false);
    await page.click(`${card} summary`);
    // A short description is the label itself (never the camelCase key); the default and range are the help.
    expect(await page.textContent(`${card} label[for=opt-counter-step]`)).to.equal('How much each count adds');
    expect(await page.textContent(`${card} #opt-counter-step-help`)).to.contain('Default: 1').and.contain('From 1 to 10');
    expect(await page.getAttribute(`${card} #opt-counter-step`, 'placeholder')).to.equal('1');
    const before = await w.readConfig();
    await page.fill(`${card} #opt-counter-step`, '50');
    await page.fill(`${card} #opt-counter-label`, 'cups');
    await page.click(`${card} button[type=submit]`);
    await page.waitForSelector(`${card} #opt-counter-step-err`);
    expect(await page.textContent(`${card} #opt-counter-step-err`)).to.equal('step: must be <= 10');
    expect(await page.getAttribute(`${card} #opt-counter-step`, 'aria-invalid')).to.equal('true');
    expect(await page.inputValue(`${card} #opt-counter-step`)).to.equal('50');
    expect(await w.readConfig()).to.equal(before);
    await page.fill(`${card} #opt-counter-step`, '3');
    await page.check(`${card} #opt-counter-loud`);
    await Promise.all([page.waitForURL(/saved=counter/), page.click(`${card} button[type=submit]`)]);
    expect(JSON.parse(await w.readConfig()).plugins.counter).to.deep.equal({ step: 3, label: 'cups', loud: true });
    expect(w.t.app.bot.config.plugins.counter.step).to.equal(3);
  });

  it('"test now" on a provider leg reports the outcome', async () => {
    await page.goto(`${w.base}/config/providers`);
    await Promise.all([page.waitForURL(/tested=/), page.click('button[aria-label="Test now: second"]')]);
    expect(await page.textContent('#notice')).to.equal('Test: second answered.');
    expect(await page.textContent('[data-leg="second"]')).to.contain('healthy');
  });

  it('the log view tails new lines live, filtered by level', async () => {
    // The page's live stream is open (its response arrived, so the server subscribed it to new lines in the same
    // step) before the markers are logged: they reach the page live, not in the lines a new stream starts with.
    await Promise.all([page.waitForResponse((r) => r.url().includes('/config/log/stream')), page.goto(`${w.base}/config/log?level=warn`)]);
    w.t.app.log.info('cockpit-info-marker');
    w.t.app.log.warn('cockpit-warn-marker');
    await page.waitForFunction(() => document.querySelector('#log-lines')?.textContent?.includes('cockpit-warn-marker'), undefined, { timeout: 10_000 });
    expect(await page.textContent('#log-lines')).not.to.contain('cockpit-info-marker');
  });
});
