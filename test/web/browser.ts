import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let browser: Promise<Browser> | undefined;

/**
 * The one headless Chromium every browser test shares (launching it costs a second or two), closed after the run.
 * @example const context = await (await sharedBrowser()).newContext({ viewport: { width: 390, height: 844 } });
 */
export function sharedBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) return Promise.reject(new Error(`${CHROMIUM} is missing: install the Debian package "chromium" (the CI does)`));
  browser ??= chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return browser;
}

after(async () => {
  if (browser) await (await browser).close();
  browser = undefined;
});

let axeSource: string | undefined;
/**
 * Runs axe-core (its source injected into the page) and returns the serious and critical violations.
 * @example expect(await seriousA11yViolations(page)).to.deep.equal([]);
 */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  axeSource ??= await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated through the DevTools protocol: the page's CSP (no inline script) stays in force for the page itself.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> } }).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id}: ${v.targets.join(', ')}`);
}

/** True when the page is wider than the window (horizontal scrolling). */
export function overflowsHorizontally(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
}
