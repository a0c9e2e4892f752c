import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { openEgressProxy } from '../../../core/services/jail/egress-proxy.js';
import { Jail } from '../../../core/services/jail/jail.js';
import type { BotAction } from '../../../core/adapters/memory/memory-transport.js';
import { createMp3Plugin } from '../../../plugins/mp3/index.js';
import { isPrivateAddress } from '../../../plugins/mp3/url-guard.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeSample } from './media-samples.js';

/** A loopback server that must receive nothing: every request it gets is recorded. */
async function victimServer(): Promise<{ port: number; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.end('internal secret');
  });
  server.on('connect', (req, socket) => {
    hits.push(`CONNECT ${req.url}`);
    socket.destroy();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { port: (server.address() as net.AddressInfo).port, hits, close: () => new Promise((ok) => server.close(() => ok())) };
}

/** A CONNECT through the proxy's socket: the status line it answers. */
function connectThrough(socket: string, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const conn = net.connect(socket, () => conn.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    conn.once('data', (d) => {
      resolve(d.toString().split('\r\n')[0]!);
      conn.destroy();
    });
    conn.on('error', reject);
  });
}

const texts = (actions: BotAction[]) => actions.filter((a): a is Extract<BotAction, { type: 'text' | 'edit' }> => a.type === 'text' || a.type === 'edit').map((a) => a.text);

/**
 * Issue 13: every connection a download makes — redirects and each DNS answer included — is checked. The
 * egress proxy is the only way out of the downloader's network namespace; a loopback server must receive nothing.
 */
describe('downloads go out only through the egress guard', function () {
  this.timeout(90_000);
  let victim: Awaited<ReturnType<typeof victimServer>>;
  before(async () => {
    victim = await victimServer();
  });
  after(async () => victim.close());
  beforeEach(() => {
    victim.hits.length = 0;
  });

  it('the proxy refuses loopback in every spelling and a name whose DNS answer is ::ffff:127.0.0.1; the named test address passes', async () => {
    const dir = await tempDir('egress-');
    const socket = path.join(dir, 'egress.sock');
    const answers: Record<string, string[]> = { 'rebind.test': ['93.184.216.34', '::ffff:127.0.0.1'], 'mapped.test': ['::ffff:127.0.0.1'], 'nat64.test': ['64:ff9b::7f00:1'] };
    const allowed = await victimServer();
    const proxy = await openEgressProxy(socket, { isBlocked: isPrivateAddress, resolve: async (h) => answers[h] ?? [], allowForTests: [`127.0.0.1:${allowed.port}`] });
    try {
      const p = victim.port;
      for (const target of [`127.0.0.1:${p}`, `[::ffff:127.0.0.1]:${p}`, `[::ffff:7f00:1]:${p}`, `[::7f00:1]:${p}`, `[::ffff:0:7f00:1]:${p}`, `[64:ff9b::7f00:1]:${p}`, `[2002:7f00:1::]:${p}`, `[2001::1]:${p}`, `[64:ff9b:1::1]:${p}`, `mapped.test:${p}`, `rebind.test:${p}`, `nat64.test:${p}`, `[::1]:${p}`]) {
        expect(await connectThrough(socket, target), target).to.match(/^HTTP\/1\.1 403/);
      }
      // Plain-HTTP requests are checked the same way.
      const plain = await new Promise<number>((resolve) => {
        const req = http.request({ socketPath: socket, path: `http://mapped.test:${p}/secret`, headers: { host: `mapped.test:${p}` } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.end();
      });
      expect(plain).to.equal(403);
      expect(victim.hits, 'requests the loopback server received').to.deep.equal([]);
      // The one named test address goes through: the guard is not simply closed.
      expect(await connectThrough(socket, `127.0.0.1:${allowed.port}`)).to.match(/^HTTP\/1\.1 200/);
      expect(proxy.refused.length).to.equal(14);
    } finally {
      await proxy.close();
      await allowed.close();
    }
  });

  describe('real yt-dlp in the jail', () => {
    let t: TestBot;
    let media: http.Server;
    let mediaPort: number;
    before(async function () {
      const jail = new Jail();
      if (!(await jail.detect()).bwrap.ok) this.skip(); // the network namespace needs bubblewrap (CI has it)
      if (spawnSync('yt-dlp', ['--version']).status !== 0) this.skip(); // CI installs yt-dlp
      const clip = await makeSample(await tempDir('egress-media-'), 'video', 1);
      const { readFile } = await import('node:fs/promises');
      const bytes = await readFile(clip);
      media = http.createServer((req, res) => {
        if (req.url === '/clip.mp4') return void res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': bytes.length }).end(req.method === 'HEAD' ? undefined : bytes);
        if (req.url === '/to-loopback') return void res.writeHead(302, { location: `http://127.0.0.1:${victim.port}/clip.mp4` }).end();
        if (req.url === '/to-mapped') return void res.writeHead(302, { location: `http://[::ffff:127.0.0.1]:${victim.port}/clip.mp4` }).end();
        res.writeHead(404).end();
      });
      await new Promise<void>((ok) => media.listen(0, '127.0.0.1', ok));
      mediaPort = (media.address() as net.AddressInfo).port;
      const answers: Record<string, string[]> = {};
      let asked = 0;
      const mp3 = createMp3Plugin({
        allowForTests: [`127.0.0.1:${mediaPort}`],
        // rebind.test: public when the link is first checked, loopback when the download connects.
        resolve: async (host) => (host === 'rebind.test' ? (asked++ === 0 ? ['93.184.216.34'] : ['::ffff:127.0.0.1']) : answers[host] ?? []),
      });
      t = await startTestBot(mp3, { options: { progressIntervalMs: 0, timeoutSeconds: 60 } });
    });
    after(async () => {
      await t?.stop();
      await new Promise<void>((ok) => (media ? media.close(() => ok()) : ok()));
    });

    it('downloads from the named test server through the proxy (the path works)', async () => {
      const actions = await t.transport.push({ text: `.dl http://127.0.0.1:${mediaPort}/clip.mp4` });
      expect(actions.some((a) => a.type === 'media'), texts(actions).join(' | ')).to.equal(true);
    });

    for (const [label, link] of [
      ['a redirect to 127.0.0.1', '/to-loopback'],
      ['a redirect to [::ffff:127.0.0.1]', '/to-mapped'],
    ] as const) {
      it(`${label}: the loopback server receives nothing and nothing is sent`, async () => {
        const actions = await t.transport.push({ text: `.dl http://127.0.0.1:${mediaPort}${link}` });
        expect(victim.hits, 'requests the loopback server received').to.deep.equal([]);
        expect(actions.some((a) => a.type === 'media')).to.equal(false);
      });
    }

    it('a name that is public when checked and ::ffff:127.0.0.1 when connecting: the loopback server receives nothing', async () => {
      const actions = await t.transport.push({ text: `.dl http://rebind.test:${victim.port}/clip.mp4` });
      expect(victim.hits, 'requests the loopback server received').to.deep.equal([]);
      expect(actions.some((a) => a.type === 'media')).to.equal(false);
    });
  });
});
