import { expect } from 'chai';
import dc from 'node:diagnostics_channel';
import type http from 'node:http';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import sinon from 'sinon';
import { AllProvidersFailedError, BadAnswerError, DownloadRefused, UpstreamFailure } from '../../../core/api/errors.js';
import { loadSettings } from '../../../core/services/config/settings.js';
import { transportFor } from '../../../core/services/http/http-fetch.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { chatPost, MOVED, type ChatPostOptions } from '../../../core/services/providers/chat-post.js';
import { classifyFailure, COOLDOWN } from '../../../core/services/providers/failure.js';
import { ProviderChain } from '../../../core/services/providers/provider-chain.js';
import { FloodServer } from '../../fakes/flood-server.js';
import { completion } from '../../fakes/openai-gateway.js';
import { TlsGateway } from '../../fakes/tls-gateway.js';

const KB = 1024;
const MB = 1024 * KB;
const BOUND = 64 * KB;
const KEY = 'sk-chatpost-secret-4242';
const BODY = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'héllo wörld ✓' }] });

const post = (baseUrl: string, options: Partial<ChatPostOptions> = {}) => chatPost({ baseUrl, apiKey: KEY, timeoutMs: 60_000, maxBytes: BOUND, what: 'the answer of primary', ...options });
const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (e: Error) => e);

/** Answers `body` with `status` (JSON unless said), reading the request first. */
const answer =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (req: http.IncomingMessage, res: http.ServerResponse) =>
    void req.resume().on('end', () => res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(typeof body === 'string' ? body : JSON.stringify(body)));

/** Answers `body` in `parts` writes without a declared length (chunked), as many gateways answer. */
const chunked = (body: string, parts = 7) => (req: http.IncomingMessage, res: http.ServerResponse) => {
  req.resume();
  const bytes = Buffer.from(body);
  res.writeHead(200, { 'content-type': 'application/json' });
  const step = Math.ceil(bytes.length / parts);
  for (let at = 0; at < bytes.length; at += step) res.write(bytes.subarray(at, at + step));
  res.end();
};

/** Resolves when the head of an answer to `path` reached the bot (node's own event, not a guess at a duration). */
function answerHeadArrived(path: string): Promise<void> {
  return new Promise((resolve) => {
    const seen = (message: unknown) => {
      if ((message as { request: http.ClientRequest }).request.path !== path) return;
      dc.unsubscribe('http.client.response.finish', seen);
      resolve();
    };
    dc.subscribe('http.client.response.finish', seen);
  });
}

/**
 * Every chat message's completion request goes out as one POST of our own over node:http (chat-post.ts), not through
 * the openai SDK: what the gateway sees, how each failure is classified, and the bound on the answer stay as they were.
 */
describe("chat legs' completion request, sent without the SDK", () => {
  let up: FloodServer | undefined;
  afterEach(async () => {
    await up?.close();
    up = undefined;
  });

  it('POSTs the body as given to <base>/chat/completions (one slash) with the key as a bearer token, JSON content type and accept, and its length in bytes', async () => {
    let seen: { url?: string; headers: http.IncomingHttpHeaders; text: string } | undefined;
    up = await FloodServer.start({
      'POST /v1/chat/completions': (req, res) => {
        const parts: Buffer[] = [];
        req.on('data', (c: Buffer) => parts.push(c)).on('end', () => {
          seen = { url: req.url, headers: req.headers, text: Buffer.concat(parts).toString('utf8') };
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion('hi there')));
        });
      },
    });
    const got = (await post(`${up.url}/v1/`)(BODY)) as ReturnType<typeof completion>;
    expect(got.choices[0].message.content).to.equal('hi there');
    expect(seen?.url).to.equal('/v1/chat/completions');
    expect(seen?.headers).to.include({ authorization: `Bearer ${KEY}`, 'content-type': 'application/json', accept: 'application/json', 'content-length': String(Buffer.byteLength(BODY)) });
    expect(seen?.headers['user-agent'], 'what the SDK said it was').to.match(/^OpenAI\/JS \d+\.\d+\.\d+$/);
    expect(seen?.headers['accept-encoding'], 'no compressed answer asked for').to.equal(undefined);
    expect(seen?.text).to.equal(BODY);
  });

  it('an answer that is not JSON is a bad answer (one after a byte order mark is JSON); a redirect is handed back (MOVED) to be followed through the SDK', async () => {
    up = await FloodServer.start({
      'POST /v1/chat/completions': answer(200, '{"choices": ['),
      'POST /old/chat/completions': (req, res) => void req.resume().on('end', () => res.writeHead(308, { location: '/v1/chat/completions' }).end()),
    });
    up.routes['POST /bom/chat/completions'] = answer(200, `\ufeff${JSON.stringify(completion('after a byte order mark'))}`);
    const bom = (await post(`${up.url}/bom`)(BODY)) as ReturnType<typeof completion>;
    expect(bom.choices[0].message.content, 'a leading byte order mark is dropped, as Response.text() dropped it').to.equal('after a byte order mark');
    const bad = await failureOf(post(`${up.url}/v1`)(BODY));
    expect(bad).to.be.instanceOf(BadAnswerError);
    expect(classifyFailure(bad)).to.include({ kind: 'bad-answer' });
    expect(await post(`${up.url}/old`)(BODY)).to.equal(MOVED);
  });

  it('through the chain, a gateway that moved (308) is followed to its answer, as the SDK followed it', async () => {
    up = await FloodServer.start({
      'POST /old/v1/chat/completions': (req, res) => void req.resume().on('end', () => res.writeHead(308, { location: '/v1/chat/completions' }).end()),
      'POST /v1/chat/completions': chunked(JSON.stringify(completion('moved but here'))),
    });
    const settings = loadSettings({ cwd: '/nonexistent', env: { PRIMARY_GATEWAY_API_KEY: KEY, PRIMARY_GATEWAY_BASE_URL: `${up.url}/old`, PRIMARY_GATEWAY_MODEL: 'm' } });
    const chain = new ProviderChain(settings, createLogger({ level: 'silent', pretty: false, destination: new PassThrough() }));
    expect((await chain.complete([{ role: 'user', content: 'where are you?' }])).text).to.equal('moved but here');
  });

  describe('timeouts (the whole request, reading included)', () => {
    let clock: sinon.SinonFakeTimers | undefined;
    afterEach(() => {
      clock?.restore();
      clock = undefined;
    });

    it('an upstream that never answers is a timeout once timeoutMs has passed, not before', async () => {
      let arrived!: () => void;
      const asked = new Promise<void>((resolve) => (arrived = resolve));
      up = await FloodServer.start({ 'POST /v1/chat/completions': (req) => void req.resume().on('end', arrived) });
      clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      let outcome: unknown = 'pending';
      void post(`${up.url}/v1`, { timeoutMs: 5_000 })(BODY).then((v) => (outcome = v), (e: unknown) => (outcome = e));
      await asked;
      clock.tick(4_999);
      expect(outcome, 'still waiting just before the timeout').to.equal('pending');
      clock.tick(1);
      // Settled by the tick itself: one turn of the event loop lets its handlers run (no waiting on a duration).
      await new Promise(setImmediate);
      expect(outcome).to.be.instanceOf(UpstreamFailure);
      expect(classifyFailure(outcome)).to.include({ kind: 'timeout', cooldownMs: COOLDOWN.network });
    });

    it('an answer whose head came but whose body stalls is a timeout too (the SDK timed only the head)', async () => {
      up = await FloodServer.start({
        'POST /v1/chat/completions': (req, res) => void req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).write('{"choices":[')),
      });
      clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const head = answerHeadArrived('/v1/chat/completions');
      let outcome: unknown = 'pending';
      void post(`${up.url}/v1`, { timeoutMs: 5_000 })(BODY).then((v) => (outcome = v), (e: unknown) => (outcome = e));
      await head;
      clock.tick(5_000);
      await new Promise(setImmediate);
      expect(classifyFailure(outcome)).to.include({ kind: 'timeout' });
    });
  });

  describe('a failing status is classified as the SDK error was', () => {
    const failed = async (status: number, body: unknown, headers: Record<string, string> = {}) => {
      up = await FloodServer.start({ 'POST /v1/chat/completions': answer(status, body, headers) });
      const err = await failureOf(post(`${up.url}/v1`)(BODY));
      await up.close();
      up = undefined;
      expect(err).to.be.instanceOf(UpstreamFailure);
      return classifyFailure(err);
    };

    it('401 and 403: the key was rejected (the leg rests until restart)', async () => {
      expect(await failed(401, { error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } })).to.include({ kind: 'auth', status: 401, cooldownMs: Infinity, summary: 'HTTP 401 invalid_api_key' });
      expect(await failed(403, { error: { message: 'forbidden' } })).to.include({ kind: 'auth', status: 403 });
    });

    it('429 with retry-after or retry-after-ms rests the leg that long; a used-up quota for hours, in JSON or in plain text', async () => {
      expect(await failed(429, { error: { code: 'rate_limit_exceeded', message: 'slow down' } }, { 'retry-after': '7' })).to.include({ kind: 'rate-limit', cooldownMs: 7_000 });
      expect(await failed(429, { error: { message: 'slow down' } }, { 'retry-after-ms': '1500' })).to.include({ kind: 'rate-limit', cooldownMs: 1_500 });
      expect(await failed(429, { error: { code: 'insufficient_quota', message: 'You exceeded your current quota' } })).to.include({ kind: 'quota', cooldownMs: COOLDOWN.quota });
      expect(await failed(429, 'Too many requests per day for this key', { 'content-type': 'text/plain' })).to.include({ kind: 'quota', status: 429 });
    });

    it('400 over the context is context-length (the caller trims); other 400s are bad requests; 5xx a server error with its retry-after', async () => {
      expect(await failed(400, { error: { message: "This model's maximum context length is 8192 tokens", code: 'context_length_exceeded' } })).to.include({ kind: 'context-length' });
      expect(await failed(400, { error: { message: 'unknown parameter' } })).to.include({ kind: 'bad-request', status: 400 });
      expect(await failed(503, { error: { message: 'overloaded' } }, { 'retry-after': '12' })).to.include({ kind: 'server', status: 503, cooldownMs: 12_000 });
    });
  });

  it("a refused connection and one broken mid-answer are network failures named by the socket's code", async () => {
    expect(classifyFailure(await failureOf(post('http://127.0.0.1:9/v1')(BODY)))).to.include({ kind: 'network', summary: 'ECONNREFUSED' });
    up = await FloodServer.start({
      'POST /v1/chat/completions': (req, res) => void req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' }).write('{"choices":[', () => res.socket?.destroy())),
    });
    expect(classifyFailure(await failureOf(post(`${up.url}/v1`)(BODY)))).to.include({ kind: 'network', summary: 'ECONNRESET' });
  });

  describe('the answer is held only up to its bound', () => {
    const refused = (err: unknown) => {
      expect(err, 'refused with DownloadRefused').to.be.instanceOf(DownloadRefused);
      expect((err as Error).message).to.equal(`the answer of primary is larger than ${BOUND} bytes`);
      expect(classifyFailure(err)).to.include({ kind: 'bad-answer' });
    };

    it('an endless chunked answer is cut off at the bound and the upstream stops being read', async () => {
      up = await FloodServer.start({ 'POST /v1/chat/completions': { contentType: 'application/json', head: '{"a":"', bytes: 256 * MB } });
      refused(await failureOf(post(`${up.url}/v1`)(BODY)));
      expect(await up.written[0], 'bytes the upstream got written before the bot hung up').to.be.below(BOUND + 32 * MB);
    });

    it('a chunked answer of exactly the bound is read whole; one byte more is refused', async () => {
      const exactly = `"${'x'.repeat(BOUND - 2)}"`;
      up = await FloodServer.start({ 'POST /exact/chat/completions': chunked(exactly), 'POST /over/chat/completions': chunked(`${exactly} `) });
      expect(await post(`${up.url}/exact`)(BODY)).to.equal('x'.repeat(BOUND - 2));
      refused(await failureOf(post(`${up.url}/over`)(BODY)));
    });

    it('an answer declaring more than the bound is refused before its body is read', async () => {
      up = await FloodServer.start({
        // Declared, then only the head sent: refusing must not wait for the rest.
        'POST /v1/chat/completions': (req, res) => void req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(BOUND + 1) }).write('{"a":"')),
      });
      // A timeout of its own: were the declared length not refused, this would end as a timeout, not hang the test.
      refused(await failureOf(post(`${up.url}/v1`, { timeoutMs: 10_000 })(BODY)));
    });

    it('an answer declaring a small length and then sending far more is held to what it declared', async () => {
      const declared = JSON.stringify(completion('only this'));
      const flood = Buffer.alloc(8 * MB, 0x61);
      const server = net.createServer((socket) => {
        socket.once('data', () => {
          socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(declared)}\r\n\r\n${declared}`);
          socket.write(flood, () => socket.end());
        });
        socket.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as net.AddressInfo;
        const got = (await post(`http://127.0.0.1:${port}/v1`)(BODY)) as ReturnType<typeof completion>;
        expect(got.choices[0].message.content).to.equal('only this');
      } finally {
        server.close();
      }
    });

    it('a gzip bomb is never decoded: its bytes are no JSON, a bad answer', async () => {
      const bomb = gzipSync(JSON.stringify({ text: 'A'.repeat(MB) }));
      expect(bomb.length, 'the bomb declares a length within the bound').to.be.below(BOUND);
      up = await FloodServer.start({
        'POST /v1/chat/completions': (req, res) => void req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(bomb.length) }).end(bomb)),
      });
      expect(await failureOf(post(`${up.url}/v1`)(BODY))).to.be.instanceOf(BadAnswerError);
    });
  });

  it("the key is in no error's text: not when the gateway echoes it back, not when it cannot be sent", async () => {
    up = await FloodServer.start({
      'POST /v1/chat/completions': (req, res) => void req.resume().on('end', () => res.writeHead(401, { 'content-type': 'text/plain' }).end(`no such key: ${req.headers.authorization}`)),
    });
    const echoed = await failureOf(post(`${up.url}/v1`)(BODY));
    expect(classifyFailure(echoed)).to.include({ kind: 'auth' });
    const unsendable = await failureOf(chatPost({ baseUrl: `${up.url}/v1`, apiKey: `${KEY}\r\nx-evil: 1`, timeoutMs: 60_000, maxBytes: BOUND, what: 'the answer of primary' })(BODY));
    expect(unsendable, 'a key no header can carry is refused before sending').to.be.instanceOf(UpstreamFailure);
    for (const err of [echoed, unsendable]) {
      expect(`${(err as Error).message} ${String(err)} ${JSON.stringify(classifyFailure(err))}`).not.to.include(KEY);
    }
  });
});

describe('a chat leg behind HTTPS (a self-signed loopback gateway)', () => {
  let gateway: TlsGateway | undefined;
  let trusted: unknown;
  afterEach(async () => {
    // The chat legs' https agent trusted the test's certificate only for this test.
    const { agent } = transportFor('https:') as unknown as { agent: { options: { ca?: unknown } } };
    agent.options.ca = trusted;
    await gateway?.close();
    gateway = undefined;
  });

  const chainOn = (url: string) => {
    const sink = new PassThrough();
    const lines: string[] = [];
    sink.on('data', (d: Buffer) => lines.push(d.toString()));
    const settings = loadSettings({ cwd: '/nonexistent', env: { PRIMARY_GATEWAY_API_KEY: KEY, PRIMARY_GATEWAY_BASE_URL: `${url}/v1`, PRIMARY_GATEWAY_MODEL: 'tls-model' } });
    return { chain: new ProviderChain(settings, createLogger({ level: 'debug', pretty: false, destination: sink })), lines };
  };
  const trust = (ca: Buffer) => {
    const { agent } = transportFor('https:') as unknown as { agent: { options: { ca?: unknown } } };
    trusted = agent.options.ca;
    agent.options.ca = ca;
  };

  it('answers over TLS with the key as a bearer token; a rejected key there is a rejected key (the leg rests, the owner is told why)', async () => {
    let accepted = true;
    gateway = await TlsGateway.start((req) =>
      accepted ? { status: 200, json: completion(`tls: ${JSON.parse(req.text).messages[0].content}`, { model: JSON.parse(req.text).model }) } : { status: 401, json: { error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } } },
    );
    trust(gateway.ca);
    const { chain, lines } = chainOn(gateway.url);
    const result = await chain.complete([{ role: 'user', content: 'over tls' }]);
    expect(result).to.include({ text: 'tls: over tls', leg: 'primary', model: 'tls-model' });
    expect(gateway.requests[0]).to.deep.include({ method: 'POST', path: '/v1/chat/completions' });
    expect(gateway.requests[0].headers.authorization).to.equal(`Bearer ${KEY}`);

    accepted = false;
    const { chain: rejected } = chainOn(gateway.url);
    const err = await rejected.complete([{ role: 'user', content: 'again' }]).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(AllProvidersFailedError);
    expect(rejected.health()[0]).to.include({ state: 'rejected', lastFailure: 'HTTP 401 invalid_api_key' });
    expect(lines.join('')).not.to.include(KEY);
  });

  it('a gateway whose certificate is not trusted is a network failure, never an answer', async () => {
    gateway = await TlsGateway.start(() => ({ status: 200, json: completion('should not be read') }));
    const err = await failureOf(chatPost({ baseUrl: `${gateway.url}/v1`, apiKey: KEY, timeoutMs: 60_000, maxBytes: BOUND, what: 'the answer of primary' })(BODY));
    expect(classifyFailure(err)).to.include({ kind: 'network', summary: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    expect(gateway.requests).to.deep.equal([]);
  });
});
