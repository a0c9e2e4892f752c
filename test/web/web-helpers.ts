import http from 'node:http';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Plugin } from '../../core/kernel/plugin/spec.js';
import { startWebServer, type WebAppOptions, type WebServer } from '../../web/server.js';
import { startTestBot, type TestBot, type TestBotOptions } from '../../app/testing/index.js';
import { openExample } from '../helpers/checkout.js';

/** A strong dashboard token (64 hex characters) used by the web tests. */
export const TOKEN = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';

export interface WebTest {
  t: TestBot;
  web: WebServer;
  port: number;
  base: string;
  configFile: string;
  readConfig(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * A real app on a memory transport plus its web server on 127.0.0.1, port 0.
 * @example const w = await startWebTest({ token: TOKEN }); await w.stop();
 */
export async function startWebTest(options: { token?: string; env?: Record<string, string>; plugins?: Plugin[]; ownIds?: string[]; config?: Record<string, unknown>; web?: WebAppOptions; sendPacing?: TestBotOptions['sendPacing'] } = {}): Promise<WebTest> {
  // A key the pages must never show, and a gateway nobody answers on: the dashboard tests make no AI requests.
  const env: Record<string, string> = { API_KEY: 'test-key-123456', BASE_URL: 'http://127.0.0.1:9', ...(options.env ?? {}) };
  if (options.token !== undefined) env.CONFIG_TOKEN = options.token;
  // The dashboard edits config.json as an owner has it: config.example.json (opened to everyone), written as given.
  const config = { ...(await openExample()), port: 0, ...(options.config ?? {}) };
  const t = await startTestBot(options.plugins ?? 'bundled', { env, ownIds: options.ownIds, config, enableGiven: false, ...(options.sendPacing ? { sendPacing: options.sendPacing } : {}) });
  const web = await startWebServer(t.app, () => t.transport, options.web);
  const configFile = path.join(t.dir, 'config.json');
  return {
    t,
    web,
    port: web.port,
    base: `http://127.0.0.1:${web.port}`,
    configFile,
    readConfig: () => readFile(configFile, 'utf8'),
    async stop() {
      await web.close();
      await t.stop();
    },
  };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Set-Cookie lines. */
  setCookies: string[];
}

/**
 * A plain HTTP request with full control of the headers (fetch may not set Host).
 * @example await request(port, { path: '/config', headers: { host: 'evil.example' } })
 */
export function request(port: number, options: { method?: string; path: string; headers?: Record<string, string>; body?: string; localAddress?: string }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...(options.headers ?? {}) };
    if (options.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/x-www-form-urlencoded';
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = http.request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers, localAddress: options.localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), setCookies: res.headers['set-cookie'] ?? [] }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** `name=value` pairs of Set-Cookie lines, joined into a Cookie header (cleared cookies dropped). */
export function cookieHeader(setCookies: string[], previous = ''): string {
  const jar = new Map<string, string>();
  for (const pair of previous.split(/;\s*/).filter(Boolean)) {
    const at = pair.indexOf('=');
    jar.set(pair.slice(0, at), pair.slice(at + 1));
  }
  for (const line of setCookies) {
    const first = line.split(';')[0] ?? '';
    const at = first.indexOf('=');
    const name = first.slice(0, at);
    const value = first.slice(at + 1);
    if (!value || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(name);
    else jar.set(name, value);
  }
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
}

/** The CSRF token in a page's forms. */
export function csrfOf(page: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(page);
  if (!match?.[1]) throw new Error(`no CSRF token in the page:\n${page.slice(0, 500)}`);
  return match[1];
}

/** The config version in the dashboard's form. */
export function versionOf(page: string): string {
  const match = /name="version" value="([^"]+)"/.exec(page);
  if (!match?.[1]) throw new Error('no version in the page');
  return match[1];
}

/** Same-origin browser headers for a POST to the server on `port`. */
export function sameOrigin(port: number): Record<string, string> {
  return { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' };
}

/**
 * Logs in through the real form; returns the session's Cookie header and the dashboard page.
 * @example const { cookie, page } = await login(w.port, TOKEN);
 */
export async function login(port: number, token: string): Promise<{ cookie: string; page: string }> {
  const form = await request(port, { path: '/config/login' });
  let cookie = cookieHeader(form.setCookies);
  const res = await request(port, { method: 'POST', path: '/config/login', headers: { cookie, ...sameOrigin(port) }, body: new URLSearchParams({ _csrf: csrfOf(form.body), token }).toString() });
  if (res.status !== 303) throw new Error(`login failed with ${res.status}: ${res.body.slice(0, 300)}`);
  cookie = cookieHeader(res.setCookies, cookie);
  const page = await request(port, { path: '/config', headers: { cookie } });
  if (page.status !== 200) throw new Error(`dashboard answered ${page.status}`);
  return { cookie, page: page.body };
}

/**
 * The form fields the dashboard page would submit, parsed from its HTML (inputs, checked boxes, selected
 * options, textareas), so HTTP tests post what a browser would.
 */
export function formFields(page: string, formId = 'config-form'): URLSearchParams {
  const start = page.indexOf(`id="${formId}"`);
  const form = page.slice(start, page.indexOf('</form>', start));
  const fields = new URLSearchParams();
  const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  for (const m of form.matchAll(/<input ([^>]*)>/g)) {
    const attrs = m[1] ?? '';
    const name = /name="([^"]*)"/.exec(attrs)?.[1];
    if (!name) continue;
    const type = /type="([^"]*)"/.exec(attrs)?.[1] ?? 'text';
    if (type === 'checkbox') {
      if (/\schecked/.test(` ${attrs}`)) fields.append(decode(name), 'on');
      continue;
    }
    fields.append(decode(name), decode(/value="([^"]*)"/.exec(attrs)?.[1] ?? ''));
  }
  for (const m of form.matchAll(/<textarea ([^>]*)>([\s\S]*?)<\/textarea>/g)) {
    const name = /name="([^"]*)"/.exec(m[1] ?? '')?.[1];
    if (name) fields.append(decode(name), decode(m[2] ?? ''));
  }
  for (const m of form.matchAll(/<select ([^>]*)>([\s\S]*?)<\/select>/g)) {
    const name = /name="([^"]*)"/.exec(m[1] ?? '')?.[1];
    const selected = /<option value="([^"]*)" selected>/.exec(m[2] ?? '')?.[1] ?? /<option value="([^"]*)"/.exec(m[2] ?? '')?.[1];
    if (name && selected !== undefined) fields.append(decode(name), decode(selected));
  }
  return fields;
}

export interface OpenStream {
  status: number;
  /** Everything received so far. */
  text(): string;
  /** Resolves once `part` has arrived. */
  waitFor(part: string): Promise<void>;
  /** Resolves when the server ends the stream; rejects with `label` if it has not after `ms`. */
  ended(label: string, ms?: number): Promise<void>;
  close(): void;
}

/** Opens a server-sent event stream with the session's cookie, as the dashboard's script does. */
export function openStream(port: number, path: string, cookie: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { host: `127.0.0.1:${port}`, cookie, accept: 'text/event-stream' } }, (res) => {
      let received = '';
      const waiters: Array<() => void> = [];
      let done = false;
      const endWaiters: Array<() => void> = [];
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        received += chunk;
        waiters.splice(0).forEach((w) => w());
      });
      const finish = () => {
        done = true;
        endWaiters.splice(0).forEach((w) => w());
      };
      res.on('end', finish);
      res.on('close', finish);
      resolve({
        status: res.statusCode ?? 0,
        text: () => received,
        waitFor: async (part) => {
          while (!received.includes(part)) {
            if (done) throw new Error(`the stream ended without ${part}: ${received}`);
            await new Promise<void>((r) => {
              waiters.push(r);
              endWaiters.push(r);
            });
          }
        },
        ended: (label, ms = 15_000) =>
          new Promise<void>((resolveEnd, rejectEnd) => {
            if (done) return resolveEnd();
            const timer = setTimeout(() => rejectEnd(new Error(`${label}: the stream was still open ${ms} ms later`)), ms);
            endWaiters.push(() => {
              clearTimeout(timer);
              resolveEnd();
            });
          }),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
  });
}
