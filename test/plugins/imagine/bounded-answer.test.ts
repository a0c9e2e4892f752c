import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import imaginePlugin from '../../../plugins/imagine/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { TINY_PNG } from '../../fakes/images-gateway.js';

const MB = 1024 * 1024;
const OWNER = '6281100000001';

/** V8's full collection (`--expose-gc` turned on at run time, as mocha runs without it). */
function fullGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/**
 * An image gateway on 127.0.0.1 whose `/v1/images/generations` answers a JSON picture of `pictureBytes` base64
 * characters, made up while it is read (never held), counting what it got out.
 */
async function hugeGateway(pictureBytes: number, onChunk: (sent: number) => void): Promise<{ url: string; sent: () => number; requests: () => number; close: () => Promise<void> }> {
  let sent = 0;
  let requests = 0;
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || !req.url?.endsWith('/images/generations')) return void res.writeHead(404).end();
    requests++;
    req.resume();
    const head = Buffer.from('{"created":1,"data":[{"b64_json":"');
    const tail = Buffer.from('"}]}');
    const filler = Buffer.alloc(64 * 1024, 'A');
    let made = 0;
    let ended = false;
    const body = new Readable({
      read() {
        if (ended) return;
        if (made === 0) this.push(head);
        if (made >= pictureBytes) {
          ended = true;
          this.push(tail);
          this.push(null);
          return;
        }
        const size = Math.min(filler.length, pictureBytes - made);
        made += size;
        this.push(filler.subarray(0, size));
      },
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    body.on('data', (chunk: Buffer) => {
      sent += chunk.length;
      onChunk(sent);
    });
    body.pipe(res);
    res.on('close', () => body.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sent: () => sent,
    requests: () => requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The image gateway's answer is read up to what a picture of the plugin's limit (10 MB) takes as base64, and no
 * further: a 400 MB answer is cut off as it arrives (before, it was read whole and then measured: 2.3 GB resident).
 */
describe('imagine: the image gateway answer is bounded by the bytes received', function () {
  this.timeout(120_000);
  let t: TestBot | undefined;
  let gateway: Awaited<ReturnType<typeof hugeGateway>> | undefined;

  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await gateway?.close();
    gateway = undefined;
  });

  it('a 400 MB answer: cut off just past the bound, memory bounded by it, the user told the picture could not be used', async () => {
    const collect = fullGc();
    let start = process.memoryUsage();
    let buffers = 0;
    let next = 0;
    gateway = await hugeGateway(400 * MB, (sent) => {
      if (sent < next) return;
      next = sent + 2 * MB;
      collect();
      buffers = Math.max(buffers, process.memoryUsage().arrayBuffers - start.arrayBuffers);
    });
    t = await startTestBot([imaginePlugin], {
      env: { API_KEY: 'sk-image-key-123456', BASE_URL: `${gateway.url}/v1`, MODEL: 'main-model', IMAGE_MODEL: 'gpt-image-1' },
      config: { owners: [OWNER] },
    });
    collect();
    start = process.memoryUsage();
    const replies = await t.send({ senderId: `${OWNER}@s.whatsapp.net`, text: '.imagine a red fox' });
    expect(replies).to.deep.equal(['The image service sent back something I cannot use as a picture. Please try again.']);
    expect(gateway.requests()).to.equal(1);
    // 10 MB of picture is 13.4 MB of base64: the answer stops a few MB past that, far from the 400 MB served.
    const bound = Math.ceil((10_000_000 * 4) / 3);
    expect(gateway.sent(), 'bytes the gateway got out').to.be.above(bound).and.below(bound + 12 * MB);
    expect(buffers, 'Buffer memory rise').to.be.below(bound + 16 * MB);
    expect(JSON.stringify(t.logs())).to.include('larger than');
  });

  it('a picture within the bound is still sent', async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ created: 1, data: [{ b64_json: TINY_PNG.toString('base64') }] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      t = await startTestBot([imaginePlugin], {
        env: { API_KEY: 'sk-image-key-123456', BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, MODEL: 'main-model', IMAGE_MODEL: 'gpt-image-1' },
        config: { owners: [OWNER] },
      });
      const actions = await t.push({ senderId: `${OWNER}@s.whatsapp.net`, text: '.imagine a red fox' });
      expect(actions.map((a) => a.type)).to.deep.equal(['media']);
    } finally {
      await t?.stop();
      t = undefined;
      server.closeAllConnections();
      server.close();
    }
  });
});
