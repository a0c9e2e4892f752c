import { expect } from 'chai';
import type http from 'node:http';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { DownloadRefused } from '../../../core/api/errors.js';
import { boundedFetch } from '../../../core/services/http/bounded-fetch.js';
import { classifyFailure } from '../../../core/services/providers/failure.js';
import { openaiSdk } from '../../../core/services/providers/openai-sdk.js';
import { FloodServer } from '../../fakes/flood-server.js';
import { completion } from '../../fakes/openai-gateway.js';

const KB = 1024;
const MB = 1024 * KB;
const BOUND = 64 * KB;
const refused = (err: unknown) => {
  expect(err, 'the read rejects with DownloadRefused').to.be.instanceOf(DownloadRefused);
  expect((err as Error).message).to.equal(`the answer of test is larger than ${BOUND} bytes`);
};

/** Answers `body` in `parts` writes without a declared length (chunked), as many gateways answer. */
const chunked =
  (body: Buffer | string, headers: Record<string, string> = {}, parts = 3) =>
  (req: http.IncomingMessage, res: http.ServerResponse) => {
    req.resume();
    const bytes = Buffer.from(body);
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req-7', ...headers });
    const step = Math.ceil(bytes.length / parts);
    for (let at = 0; at < bytes.length; at += step) res.write(bytes.subarray(at, at + step));
    res.end();
  };

/**
 * The fetch every SDK client of the bot reads its answers through (chat legs, vision, audio): whatever an upstream
 * sends, the bot holds at most the bound, however the answer is framed (declared length, chunked, compressed).
 */
describe('bounded fetch (the built-in fetch): an upstream answer is held only up to its bound', () => {
  const fetchUpTo = boundedFetch(BOUND, 'the answer of test');
  let up: FloodServer;
  afterEach(async () => {
    await up?.close();
  });

  it('an endless chunked answer is cut off at the bound: the read fails clearly and the upstream stops being read', async () => {
    up = await FloodServer.start({ 'POST /v1/chat/completions': { contentType: 'application/json', head: '{"a":"', bytes: 256 * MB } });
    const response = await fetchUpTo(`${up.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(response.status).to.equal(200);
    refused(await response.json().then(() => undefined, (e: unknown) => e));
    expect(await up.written[0], 'bytes the upstream got written before the bot hung up').to.be.below(BOUND + 32 * MB);
  });

  it('a chunked answer of exactly the bound is read whole; one byte more is refused', async () => {
    const exactly = `"${'x'.repeat(BOUND - 2)}"`;
    up = await FloodServer.start({ 'GET /exact': chunked(exactly, {}, 7), 'GET /over': chunked(`${exactly} `, {}, 7) });
    expect(await (await fetchUpTo(`${up.url}/exact`)).json()).to.equal('x'.repeat(BOUND - 2));
    refused(await (await fetchUpTo(`${up.url}/over`)).text().then(() => undefined, (e: unknown) => e));
  });

  it('an answer declaring a small length and then sending far more is held to what it declared (the framing bounds it, not the claim)', async () => {
    // A raw socket, not an HTTP server: it writes a head that declares 100 bytes, then keeps writing 8 MB.
    const flood = Buffer.alloc(8 * MB, 0x61);
    const server = net.createServer((socket) => {
      socket.once('data', () => {
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n');
        socket.write(flood, () => socket.end());
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as net.AddressInfo;
      const response = await fetchUpTo(`http://127.0.0.1:${port}/lying`, { method: 'POST', body: '{}' });
      const text = await response.text();
      expect(text.length, 'the bot holds no more than the 100 bytes declared').to.equal(100);
      expect(text).to.equal('a'.repeat(100));
    } finally {
      server.close();
    }
  });

  it('an answer declaring more than the bound is refused before its body is read', async () => {
    up = await FloodServer.start({
      'GET /big': (req, res) => {
        req.resume();
        // Declared, then only the head sent: refusing must not wait for the rest.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(BOUND + 1) }).write('{"a":"');
      },
    });
    refused(await fetchUpTo(`${up.url}/big`).then(() => undefined, (e: unknown) => e));
  });

  it('a compressed answer is bounded by its decoded size, whatever small length it declares (a gzip bomb)', async () => {
    const bomb = gzipSync(JSON.stringify({ text: 'A'.repeat(MB) }));
    expect(bomb.length, 'the bomb declares a length within the bound').to.be.below(BOUND);
    up = await FloodServer.start({
      'GET /bomb': (req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(bomb.length) }).end(bomb);
      },
    });
    const read = await (await fetchUpTo(`${up.url}/bomb`)).json().then(() => undefined, (e: unknown) => e);
    // fetch decodes it, so its decoded size is bounded (chat-post.test.ts: the chat legs decode nothing).
    refused(read);
  });

  it('an answer within the bound reads the same through every reader: text (byte order mark dropped), bytes, blob, body, a clone', async () => {
    const text = JSON.stringify({ answer: 'héllo wörld ✓' });
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    up = await FloodServer.start({ 'GET /a': chunked(bom), 'GET /declared': (req, res) => void res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(Buffer.byteLength(text)) }).end(text) });
    const url = `${up.url}/a`;
    const first = await fetchUpTo(url);
    expect(first.headers.get('x-request-id')).to.equal('req-7');
    expect(first.url).to.equal(url);
    const copy = first.clone();
    expect(await first.json()).to.deep.equal({ answer: 'héllo wörld ✓' });
    expect(first.bodyUsed).to.equal(true);
    expect(await first.text().then(() => 'read twice', (e: Error) => e.name)).to.equal('TypeError');
    expect(Buffer.from(await copy.arrayBuffer()).equals(bom), 'a clone reads the same bytes').to.equal(true);
    expect(Buffer.from(await (await fetchUpTo(url)).bytes()).equals(bom)).to.equal(true);
    const blob = await (await fetchUpTo(url)).blob();
    expect(blob.type).to.equal('application/json');
    expect(Buffer.from(await blob.arrayBuffer()).equals(bom)).to.equal(true);
    const streamed: Uint8Array[] = [];
    for await (const chunk of (await fetchUpTo(url)).body as unknown as AsyncIterable<Uint8Array>) streamed.push(chunk);
    expect(Buffer.concat(streamed).equals(bom)).to.equal(true);
    expect(await (await fetchUpTo(`${up.url}/declared`)).text()).to.equal(text);
  });

  it('the openai SDK reads a chunked chat answer through it as it would without (its request id included)', async () => {
    up = await FloodServer.start({ 'POST /v1/chat/completions': chunked(JSON.stringify(completion('bounded and whole'))) });
    const { default: OpenAI } = await openaiSdk();
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${up.url}/v1`, maxRetries: 0, fetch: fetchUpTo });
    const answer = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0].message.content).to.equal('bounded and whole');
    expect(answer._request_id).to.equal('req-7');
  });

  it('through the openai SDK, a hung upstream is a timeout and a refused connection a network failure', async () => {
    up = await FloodServer.start({ 'POST /v1/chat/completions': (req) => void req.resume() });
    const { default: OpenAI } = await openaiSdk();
    const ask = (baseURL: string) =>
      new OpenAI({ apiKey: 'sk-test', baseURL, maxRetries: 0, timeout: 200, fetch: fetchUpTo }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).then(() => undefined, (e: unknown) => e);
    expect(classifyFailure(await ask(`${up.url}/v1`))).to.include({ kind: 'timeout' });
    const refusedConnection = classifyFailure(await ask('http://127.0.0.1:9/v1'));
    expect(refusedConnection).to.include({ kind: 'network' });
  });

  it('follows a gateway that moved (a 308 redirect) to its answer', async () => {
    up = await FloodServer.start({
      'POST /old/chat/completions': (req, res) => void req.resume().on('end', () => res.writeHead(308, { location: '/v1/chat/completions' }).end()),
      'POST /v1/chat/completions': chunked(JSON.stringify(completion('moved but here'))),
    });
    const { default: OpenAI } = await openaiSdk();
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${up.url}/old`, maxRetries: 0, fetch: fetchUpTo });
    const answer = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0].message.content).to.equal('moved but here');
  });
});
