import { expect } from 'chai';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import http from 'node:http';
import { SITE_CSP } from '../../../plugins/workspace/site.js';
import { startWebServer, type WebServer } from '../../../web/server.js';
import type { TestBot } from '../../../app/testing/index.js';
import { putFile, startWorkspaceApp, texts, USER, workspaceDir } from './helpers.js';

/** A raw GET (no URL normalisation, unlike fetch), so traversal attempts reach the server as written. */
function get(port: number, rawPath: string, hostHeader?: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: rawPath, method: 'GET', headers: hostHeader ? { host: hostHeader } : {} }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('workspace sites', function () {
  this.timeout(30_000);
  let t: TestBot;
  let web: WebServer;
  let dir: string;

  before(async () => {
    t = await startWorkspaceApp({ env: { PUBLIC_BASE_URL: 'https://bot.example.org/', CONFIG_TOKEN: 'tok-123456789' }, config: { port: 0 } });
    web = await startWebServer(t.app, () => t.transport);
    await t.transport.push({ text: '/ws', senderId: USER });
    dir = await workspaceDir(t);
    await putFile(dir, 'index.html', '<!doctype html><title>Alice</title><h1>Hello from Alice</h1><link rel="stylesheet" href="css/site.css">');
    await putFile(dir, 'css/site.css', 'h1 { color: teal }');
    await putFile(dir, 'app.js', 'console.log(1)');
    await putFile(dir, 'secret.py', 'TOKEN = "py-source"');
    await putFile(dir, 'docs/readme.txt', 'no index here');
    await writeFile(path.join(dir, '.hidden.html'), 'dotfile');
  });
  after(async () => {
    await web.close();
    await t.stop();
  });

  it('claims a username and answers with the public address', async () => {
    const [reply] = texts(await t.transport.push({ text: '/ws name Alice', senderId: USER }));
    expect(reply).to.include('https://bot.example.org/alice/');
  });

  it('refuses a taken, reserved or malformed username', async () => {
    await t.transport.push({ text: '/ws', senderId: '62833334444@s.whatsapp.net' });
    expect(texts(await t.transport.push({ text: '/ws name alice', senderId: '62833334444@s.whatsapp.net' }))[0]).to.match(/taken/);
    expect(texts(await t.transport.push({ text: '/ws name config', senderId: '62833334444@s.whatsapp.net' }))[0]).to.match(/reserved/);
    expect(texts(await t.transport.push({ text: '/ws name ../x', senderId: '62833334444@s.whatsapp.net' }))[0]).to.match(/only contain/);
  });

  it('serves index.html and assets with content types, nosniff and a CSP', async () => {
    const page = await get(web.port, '/alice/');
    expect(page.status).to.equal(200);
    expect(page.body).to.include('Hello from Alice');
    expect(page.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(page.headers['x-content-type-options']).to.equal('nosniff');
    expect(page.headers['content-security-policy']).to.include('sandbox').and.include("connect-src 'none'").and.include("frame-ancestors 'none'");
    const css = await get(web.port, '/alice/css/site.css');
    expect(css.status).to.equal(200);
    expect(css.headers['content-type']).to.equal('text/css; charset=utf-8');
    expect((await get(web.port, '/alice/app.js')).headers['content-type']).to.equal('text/javascript; charset=utf-8');
    const bare = await get(web.port, '/alice');
    expect(bare.status).to.equal(301);
    expect(bare.headers.location).to.equal('./alice/');
  });

  it('never serves traversal, dotfiles, sources or listings', async () => {
    const attempts = [
      '/alice/../config.json',
      '/alice/..%2f..%2f..%2f.env',
      '/alice/%2e%2e/%2e%2e/%2e%2e/config.json',
      '/alice/..%2F..%2Fsession_auth%2Fcreds.json',
      '/alice/css/..%2f..%2f..%2f..%2f.env',
      '/alice/%2e%2e%5c%2e%2e%5cconfig.json',
      '/alice/.hidden.html',
      '/alice/%2ehidden.html',
      '/alice/secret.py',
      '/alice/docs/',
      '/alice/css/',
      '/alice/index.html%00.txt',
      '/alice//etc/passwd',
      '/alice/%E0%A4%A',
    ];
    for (const attempt of attempts) {
      const res = await get(web.port, attempt);
      expect(res.status, attempt).to.be.oneOf([400, 404]);
      expect(res.body, attempt).not.to.match(/tok-123456789|noiseKey|py-source|dotfile|prefix/);
    }
  });

  it('does not follow a symlink out of the workspace (file or folder)', async () => {
    await writeFile(path.join(t.dir, 'outside.html'), '<p>OUTSIDE SECRET</p>');
    await symlink(path.join(t.dir, 'outside.html'), path.join(dir, 'leak.html'));
    await symlink(t.dir, path.join(dir, 'up'));
    await mkdir(path.join(t.dir, 'deep'), { recursive: true });
    await writeFile(path.join(t.dir, 'deep', 'index.html'), 'DEEP SECRET');
    await symlink(path.join(t.dir, 'deep'), path.join(dir, 'deep'));
    for (const attempt of ['/alice/leak.html', '/alice/up/outside.html', '/alice/up/config.json', '/alice/deep/', '/alice/deep/index.html']) {
      const res = await get(web.port, attempt);
      expect(res.status, attempt).to.equal(404);
      expect(res.body, attempt).not.to.include('SECRET');
    }
  });

  it('leaves unknown names and the service routes alone', async () => {
    expect((await get(web.port, '/nobody-here/')).status).to.equal(404);
    const root = await get(web.port, '/');
    expect(root.status).to.equal(200);
    expect(String(root.headers['content-security-policy'])).not.to.equal(SITE_CSP);
  });

  it('serves on SITE_PORT only, when it is set', async () => {
    const t2 = await startWorkspaceApp({ env: { PUBLIC_BASE_URL: 'https://sites.example.org', SITE_PORT: '0' }, config: { port: 0 } });
    const web2 = await startWebServer(t2.app, () => t2.transport);
    try {
      await t2.transport.push({ text: '/ws', senderId: USER });
      await t2.transport.push({ text: '/ws name bob', senderId: USER });
      await putFile(await workspaceDir(t2), 'index.html', '<h1>Bob</h1>');
      const line = t2.logs().find((l) => /workspace sites served on port/.test(l.msg));
      const sitePort = Number(line?.port);
      expect(sitePort).to.be.greaterThan(0);
      const page = await get(sitePort, '/bob/');
      expect(page.status).to.equal(200);
      expect(page.body).to.include('Bob');
      expect(page.headers['content-security-policy']).to.include('sandbox');
      expect((await get(sitePort, '/bob/../config.json')).status).to.equal(404);
      expect((await get(web2.port, '/bob/')).status).to.equal(404);
      // Reached through the public name it works; a rebinding name is refused like on the main server.
      expect((await get(sitePort, '/bob/', 'sites.example.org')).status).to.equal(200);
      expect((await get(sitePort, '/bob/', `evil.example:${sitePort}`)).status).to.equal(421);
    } finally {
      await web2.close();
      await t2.stop();
    }
    // stop() closed the site server.
    const line = t2.logs().find((l) => /workspace sites served on port/.test(l.msg));
    const closed = await get(Number(line?.port), '/bob/').then(() => 'open', () => 'closed');
    expect(closed).to.equal('closed');
  });

  it('says hosting is off without PUBLIC_BASE_URL', async () => {
    const t3 = await startWorkspaceApp();
    try {
      await t3.transport.push({ text: '/ws', senderId: USER });
      const [reply] = texts(await t3.transport.push({ text: '/ws name carol', senderId: USER }));
      expect(reply).to.match(/hosting is off/);
    } finally {
      await t3.stop();
    }
  });
});
