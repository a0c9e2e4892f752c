import { expect } from 'chai';
import { mkdir, readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import pingPlugin from '../../plugins/ping/index.js';
import { ROOT } from '../helpers/checkout.js';
import { sharedBrowser } from './browser.js';
import { startWebTest, TOKEN, type WebTest } from './web-helpers.js';

const BOT_PHONE = '62899999999';
const BOT_LID = '123456789012345';
/** Where the CI keeps the dashboard screenshot (dist/ is the repository's ignored output folder). */
export const ARTIFACTS = path.join(ROOT, 'dist', 'artifacts');

async function pongs(w: WebTest): Promise<number> {
  const actions = await w.t.transport.push({ text: '.ping' });
  return actions.filter((a) => a.type === 'text' && a.text.startsWith('pong')).length;
}

describe('dashboard in headless Chromium', function () {
  this.timeout(60_000);
  let context: BrowserContext;
  let page: Page;
  let w: WebTest;
  const urls: string[] = [];

  before(async function () {
    const browser = await sharedBrowser();
    w = await startWebTest({ token: TOKEN, plugins: [pingPlugin], ownIds: [BOT_PHONE, BOT_LID] });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('request', (r) => urls.push(r.url()));
  });

  after(async () => {
    await context?.close();
    await w?.stop();
  });

  it('refuses a wrong token and logs in with the right one; the token is never in the page or a URL', async () => {
    await page.goto(`${w.base}/config`);
    expect(new URL(page.url()).pathname).to.equal('/config/login');
    await page.fill('#token', 'not-the-token');
    await page.click('button[type=submit]');
    await expect(await page.textContent('#login-error')).to.contain('Wrong token');

    await page.fill('#token', TOKEN);
    await Promise.all([page.waitForURL(`${w.base}/config`), page.click('button[type=submit]')]);
    expect(await page.textContent('h1')).to.contain('dashboard');
    expect(await page.content()).not.to.contain(TOKEN);
    expect(await page.inputValue('input[name="prefix"]')).to.equal('.');
    expect(urls.some((u) => u.includes(TOKEN) || u.includes('token='))).to.equal(false);

    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'wab_dash');
    expect(session?.httpOnly).to.equal(true);
    expect(session?.sameSite).to.equal('Strict');
    expect(session?.expires).to.be.greaterThan(Date.now() / 1000);
    expect(session?.value).not.to.contain(TOKEN);
    // httpOnly: scripts on the page cannot read the session.
    expect(await page.evaluate(() => document.cookie)).not.to.contain('wab_dash');
  });

  it('disables a plugin: saved to config.json with a backup, and .ping stops answering at once', async () => {
    expect(await pongs(w)).to.equal(1);
    const before = await w.readConfig();
    await page.uncheck('input[name="plugin:ping:enabled"]');
    await Promise.all([page.waitForURL(/\/config\?saved=1$/), page.click('#save')]);
    expect(await page.textContent('#notice')).to.contain('Saved and applied');
    expect(await page.isChecked('input[name="plugin:ping:enabled"]')).to.equal(false);
    expect(JSON.parse(await w.readConfig()).plugins.ping.enabled).to.equal(false);
    expect(await readFile(`${w.configFile}.bak`, 'utf8')).to.equal(before);
    expect(await pongs(w)).to.equal(0);

    await page.check('input[name="plugin:ping:enabled"]');
    await Promise.all([page.waitForURL(/\/config\?saved=1$/), page.click('#save')]);
    expect(await pongs(w)).to.equal(1);
  });

  it('shows a clear error for an invalid field and leaves config.json unchanged', async () => {
    const before = await w.readConfig();
    await page.fill('input[name="port"]', 'eighty');
    await page.fill('textarea[name="owners"]', 'owner-without-digits');
    await page.click('#save');
    await page.waitForSelector('#form-errors');
    expect(await page.textContent('#form-errors')).to.contain('port: must be integer').and.contain('owners.0: must be digits only');
    expect(await page.textContent('[data-field="port"]')).to.contain('port: must be integer');
    expect(await page.getAttribute('input[name="port"]', 'aria-invalid')).to.equal('true');
    expect(await page.inputValue('input[name="port"]')).to.equal('eighty');
    expect(await w.readConfig()).to.equal(before);
  });

  it('adds the bot\'s own LID to targetUserIds with one click', async () => {
    await page.goto(`${w.base}/config`);
    await Promise.all([page.waitForURL(/saved=1/), page.click(`button[name="addOwnId"][value="${BOT_LID}"]`)]);
    expect(JSON.parse(await w.readConfig()).targetUserIds).to.deep.equal([BOT_LID]);
    expect(await page.inputValue('textarea[name="targetUserIds"]')).to.equal(BOT_LID);
    expect(await page.isVisible(`button[name="addOwnId"][value="${BOT_PHONE}"]`)).to.equal(true);
  });

  it('renders a readable page (screenshot kept in dist/artifacts)', async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    const file = path.join(ARTIFACTS, 'dashboard.png');
    await page.screenshot({ path: file, fullPage: true });
    expect((await stat(file)).size).to.be.greaterThan(10_000);
    // The CSP allows the page's own stylesheet: the layout is styled, not the browser default.
    expect(await page.evaluate(() => getComputedStyle(document.querySelector('header') as Element).display)).to.equal('flex');
  });

  it('refuses a cross-site form post from another origin (403), without changing anything', async () => {
    const before = await w.readConfig();
    const attacker = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<form id="f" method="post" action="${w.base}/config/save"><input name="botName" value="Pwned"><input name="prefix" value="!"></form><script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      const attackPage = await context.newPage();
      const response = attackPage.waitForResponse((r) => r.url() === `${w.base}/config/save`);
      // localhost and 127.0.0.1 are different sites to the browser.
      await attackPage.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`);
      expect((await response).status()).to.equal(403);
      await attackPage.close();
    } finally {
      attacker.close();
    }
    expect(await w.readConfig()).to.equal(before);
  });

  it('logs out: the dashboard asks for the token again', async () => {
    await page.goto(`${w.base}/config`);
    await Promise.all([page.waitForURL(/\/config\/login\?out=1$/), page.click('#logout')]);
    expect(await page.textContent('main')).to.contain('Logged out');
    await page.goto(`${w.base}/config`);
    expect(new URL(page.url()).pathname).to.equal('/config/login');
  });
});
