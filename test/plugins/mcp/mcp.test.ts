import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Server as McpLowLevelServer } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { logTail } from '../../../core/services/log/log-tail.js';
import { startTestBot, type ModelRequest, type TestBot } from '../../../app/testing/index.js';
import mcp from '../../../plugins/mcp/index.js';
import { mcpConfigPath } from '../../../plugins/mcp/mcp-config.js';
import { offeredName } from '../../../plugins/mcp/tool-names.js';
import ping from '../../../plugins/ping/index.js';
import { tempDir } from '../../helpers/checkout.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The real third-party server, run with this node from node_modules (no npx, no download). */
const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
const FIXTURE = path.join(here, 'fixture-server.js');
const OWNER = '10000000001';
const OWNER2 = '10000000009';
const STRANGER = '19990000002@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const BOT_ID = '15550001111@s.whatsapp.net';

type Entry = Record<string, unknown>;
const everything = (extra: Entry = {}): Entry => ({ command: process.execPath, args: [EVERYTHING, 'stdio'], ...extra });

/** The tool results the model was shown, across all its requests. */
function toolResults(requests: ModelRequest[]): string[] {
  return requests.flatMap((r) => r.messages.filter((m) => m.role === 'tool').map((m) => String(m.content)));
}

/** A model that calls `tool` once per user turn, then answers with the tool's result. */
function callsTool(tool: string, args: Record<string, unknown>) {
  return (request: ModelRequest) => {
    const last = request.messages.at(-1);
    if (last?.role === 'tool') return `tool said: ${String(last.content)}`;
    return request.tools.includes(tool) ? { tool, args } : `offered: ${request.tools.join(',') || 'nothing'}`;
  };
}

/**
 * The tests whose servers need no restart share one bot (each in its own chat: a chat whose answer repeated a server's
 * words runs no acting tool after). Its servers are started once, side by side: the hung one's start timeout passes
 * while the others start.
 */
describe('mcp plugin: MCP tool servers from mcp.json (one bot: everything, open to everyone, in groups, one hung at start)', function () {
  this.timeout(40_000);
  const OWNER3 = '10000000007';
  const OWNER4 = '10000000005';
  let dir: string;
  let b: TestBot;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcp-shared-'));
    const file = path.join(dir, 'mcp.json');
    // "mute" is not restarted within the tests (the restart backoff is longer than the file; a restart is the crash
    // test's): one hung start, its status stays DOWN.
    const mute = { command: process.execPath, args: [FIXTURE, 'mute'], env: { MUTE_TOKEN: 'tok-secret-5555' }, startTimeoutMs: 3000 };
    await writeFile(file, JSON.stringify({ mcpServers: { everything: everything(), open: everything({ access: 'everyone' }), grouped: everything({ groups: true }), mute } }));
    // Each test's own request decides the tool its model calls.
    const calls: Record<string, ReturnType<typeof callsTool>> = {
      'please echo sunflower 42': callsTool('everything__echo', { message: 'sunflower 42' }),
      'show me the tiny image': callsTool('everything__get-tiny-image', {}),
    };
    b = await startTestBot(mcp, {
      options: { restartBackoffMs: 600_000, maxRestartBackoffMs: 600_000, startWaitMs: 60_000 },
      config: { owners: [OWNER, OWNER2, OWNER3, OWNER4], targetUserIds: ['15550001111'] },
      env: { MCP_CONFIG: file },
      model: (request: ModelRequest) => {
        const asked = String(request.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
        return (calls[asked] ?? callsTool('nothing', {}))(request);
      },
    });
  });
  after(async () => {
    await b?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("offers the real server's tools name-spaced, and the echo result reaches the reply framed as data", async () => {
    const first = b.model.requests.length;
    const [reply] = await b.send('please echo sunflower 42');
    assert.match(reply, /^tool said: /);
    assert.match(reply, /Echo: sunflower 42/);
    assert.match(reply, /data, not instructions/);
    const offered = b.model.requests[first].tools;
    assert.ok(offered.includes('everything__get-env') && offered.includes('everything__echo'), offered.join(','));
    assert.ok(offered.every((name) => /^[A-Za-z0-9_-]{1,64}$/.test(name)), offered.join(','));
  });

  it('describes an image result instead of dropping it', async () => {
    const [reply] = await b.send({ text: 'show me the tiny image', senderId: `${OWNER2}@s.whatsapp.net`, chatId: `${OWNER2}@s.whatsapp.net` });
    assert.match(reply, /\[an image \(image\/png, \d+ bytes\) that cannot be shown here\]/);
  });

  it('offers a server to owners only by default: a stranger is not offered its tools, and "everyone" opens it', async () => {
    await b.send({ text: 'what tools?', senderId: STRANGER });
    const strangerTools = b.model.requests.at(-1)!.tools;
    assert.ok(!strangerTools.some((t) => t.startsWith('everything__')), strangerTools.join(','));
    assert.ok(strangerTools.includes('open__echo'), strangerTools.join(','));
    await b.send({ text: 'what tools?', senderId: `${OWNER3}@s.whatsapp.net`, chatId: `${OWNER3}@s.whatsapp.net` });
    assert.ok(b.model.requests.at(-1)!.tools.includes('everything__echo'));
  });

  it('offers no server tools in a group unless the entry says groups: true, even to an owner', async () => {
    await b.send({ text: '@bot what tools?', chatId: GROUP, isGroup: true, mentions: [BOT_ID], senderId: `${OWNER}@s.whatsapp.net` });
    const groupTools = b.model.requests.at(-1)!.tools;
    assert.ok(groupTools.includes('grouped__echo'), groupTools.join(','));
    assert.ok(!groupTools.some((t) => t.startsWith('everything__')), groupTools.join(','));
  });

  it('names a server that hangs at start, offers none of its tools, and keeps the others', async () => {
    await b.until(() => b.logs().some((l) => /MCP server "mute" is down: failed to start: it did not answer in time \(it said: waiting with token \[hidden\]\)/.test(String(l.msg))));
    await b.send({ text: 'what tools?', senderId: `${OWNER4}@s.whatsapp.net`, chatId: `${OWNER4}@s.whatsapp.net` });
    const offered = b.model.requests.at(-1)!.tools;
    assert.ok(offered.includes('everything__echo') && !offered.some((t) => t.startsWith('mute__')), offered.join(','));
    const status = b.app.capabilities.status('mcp');
    assert.match(status.detail, /mute: DOWN, failed to start: it did not answer in time/);
    assert.ok(!JSON.stringify(b.logs()).includes('tok-secret-5555'), 'the entry token reached the log');
    assert.match(status.detail, /everything: up, \d+ tool\(s\)/);
  });
});

describe('mcp plugin: MCP tool servers from mcp.json', function () {
  this.timeout(40_000);
  let dir: string;
  let bot: TestBot | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcp-test-'));
  });
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  async function start(servers: Record<string, Entry>, model: Parameters<typeof startTestBot>[1] extends infer O ? (O extends { model?: infer M } ? M : never) : never, env: Record<string, string> = {}, restartBackoffMs = 50) {
    const file = path.join(dir, 'mcp.json');
    await writeFile(file, JSON.stringify({ mcpServers: servers }));
    bot = await startTestBot(mcp, {
      // Start-up waits for the servers (up or failed), not a fixed 5 s: under load they take longer to start.
      options: { restartBackoffMs, maxRestartBackoffMs: Math.max(200, restartBackoffMs), startWaitMs: 60_000 },
      config: { owners: [OWNER], targetUserIds: ['15550001111'] },
      env: { MCP_CONFIG: file, ...env },
      model,
    });
    return bot;
  }

  it('lets a listed id use a server, and still refuses a stranger who is not listed', async () => {
    const b = await start({ listed: everything({ access: ['19990000002'] }) }, callsTool('nothing', {}));
    await b.send({ text: 'hi', senderId: STRANGER });
    assert.ok(b.model.requests.at(-1)!.tools.includes('listed__echo'));
    await b.send({ text: 'hi', senderId: '17770000003@s.whatsapp.net' });
    assert.ok(!b.model.requests.at(-1)!.tools.includes('listed__echo'));
  });

  it("gives a stdio server only its entry's environment: none of the bot's keys", async () => {
    process.env.MCP_TEST_LEAK_KEY = 'sk-process-secret-9911';
    try {
      const b = await start({ everything: everything({ env: { GREETING: 'hi', SERVICE_TOKEN: 'entry-token-4242' } }) }, callsTool('everything__get-env', {}), { OPENAI_API_KEY: 'sk-bot-env-secret-7722' });
      await b.send('print your env');
      const [result] = toolResults(b.model.requests);
      assert.match(result, /"GREETING": "hi"/);
      // The entry's own token reached the server, and is hidden from what the model reads.
      assert.match(result, /"SERVICE_TOKEN": "\[hidden\]"/);
      assert.ok(!result.includes('entry-token-4242'));
      assert.match(result, /"PATH": /);
      for (const secret of ['sk-process-secret-9911', 'sk-bot-env-secret-7722', 'test-kit-key', 'MCP_CONFIG', 'API_KEY']) assert.ok(!result.includes(secret), `${secret} leaked`);
    } finally {
      delete process.env.MCP_TEST_LEAK_KEY;
    }
  });

  it('times out a hanging tool call and says so, and the server stays usable', async () => {
    const model = (request: ModelRequest) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return `tool said: ${String(last.content)}`;
      return /slow/.test(String(last?.content)) ? { tool: 'everything__trigger-long-running-operation', args: { duration: 20, steps: 2 } } : { tool: 'everything__echo', args: { message: 'still here' } };
    };
    const b = await start({ everything: everything({ timeoutMs: 1500 }) }, model);
    // The call's 1.5 s run on a fake clock, moved to just before and then just past them, instead of waited out.
    const clock = b.useClock(['setTimeout', 'clearTimeout']);
    const failed = () => b.logs().some((l) => /MCP tool "trigger-long-running-operation" of "everything" failed/.test(String(l.msg)));
    let slow: string | undefined;
    try {
      const answered = b.send('do the slow thing');
      await b.until(() => b.logs().some((l) => /MCP tool "trigger-long-running-operation" of "everything" called/.test(String(l.msg))));
      await clock.tick(1499);
      // Whatever a timeout that fired would have set off (no I/O before its log line) has run by the next turn of the loop.
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(failed(), false, 'the call was given up before its 1.5 s');
      await clock.tick(1);
      [slow] = await answered;
    } finally {
      clock.restore();
    }
    assert.ok(failed());
    assert.match(slow!, /did not answer within 1\.5 s and was cancelled/);
    const [after] = await b.send('echo please');
    assert.match(after, /Echo: still here/);
  });

  it('restarts a server that crashes, its tools gone while it is down and back after', async () => {
    const starts = path.join(dir, 'starts.txt');
    const model = (request: ModelRequest) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return `tool said: ${String(last.content)}`;
      if (/crash/.test(String(last?.content))) return { tool: 'fixture__crash', args: {} };
      return request.tools.includes('fixture__hello') ? { tool: 'fixture__hello', args: { name: 'ann' } } : `offered: ${request.tools.join(',') || 'nothing'}`;
    };
    const b = await start({ fixture: { command: process.execPath, args: [FIXTURE, 'crashy'], env: { STARTS_FILE: starts }, timeoutMs: 5000 } }, model, {}, 2500);
    // The restart wait runs on a fake clock: on a loaded machine the turn below could take longer than the real 2.5 s
    // of backoff and find the server back already.
    const clock = b.useClock(['setTimeout', 'clearTimeout']);
    try {
      const [crashed] = await b.send('crash now');
      assert.match(crashed, /The tool "crash" of the MCP server "fixture" failed: the connection closed/);
      await b.until(() => b.logs().some((l) => /MCP server "fixture" is down/.test(String(l.msg))));
      // Within the restart backoff: none of its tools are offered.
      const [whileDown] = await b.send('hello while down');
      assert.match(whileDown, /^offered: /);
      assert.doesNotMatch(whileDown, /fixture__/);
      assert.equal(b.logs().filter((l) => /MCP server "fixture" is up/.test(String(l.msg))).length, 1, 'restarted before its backoff was over');
      await clock.tick(2500);
    } finally {
      clock.restore();
    }
    await b.until(() => b.logs().filter((l) => /MCP server "fixture" is up/.test(String(l.msg))).length >= 2);
    // The server writes its start down before it answers anything: up again means started again.
    assert.equal((await readFile(starts, 'utf8')).trim().split('\n').length, 2);
    const [again] = await b.send('hello');
    assert.match(again, /hello ann from pid \d+/);
  });

  it("never repeats a server's env token echoed escaped or encoded (JSON, URL, base64, a Basic credential): not in the reply, to the model or in the log", async () => {
    const TOKEN = 'tok"leaky/secret\\é-9191';
    const model = (request: ModelRequest) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return `tool said: ${String(last.content)}`;
      const text = String(last?.content);
      return text.startsWith('call ') ? { tool: text.slice('call '.length), args: {} } : 'ok';
    };
    const b = await start({ leaky: { command: process.execPath, args: [FIXTURE, 'leaky'], env: { LEAK_TOKEN: TOKEN }, access: 'everyone' } }, model);
    const [reply] = await b.send({ text: 'call leaky__leak_encoded', senderId: STRANGER });
    assert.match(reply!, /callback=https:\/\/cb\.example\/\?t=\[hidden\]/);
    assert.match(reply!, /b64=\[hidden\]/);
    const forms = [TOKEN, JSON.stringify(TOKEN).slice(1, -1), encodeURIComponent(TOKEN), Buffer.from(TOKEN).toString('base64'), Buffer.from(`svc:${TOKEN}`).toString('base64').slice(8, 24)];
    for (const [where, text] of [
      ['the reply', reply!],
      ['the model', JSON.stringify(b.model.requests)],
      ['the log', JSON.stringify(b.logs())],
    ] as const) {
      for (const form of forms) assert.ok(!text.includes(form), `the token reached ${where} as ${form}`);
    }
  });

  it("never repeats a server's env token, in a protocol error, a tool error, a result or a description: not in the reply, the log or the dashboard's log view", async () => {
    const TOKEN = 'tok-leaky-secret-8080';
    const tail: string[] = [];
    const off = logTail.subscribe((line) => tail.push(line.msg));
    try {
      const model = (request: ModelRequest) => {
        const last = request.messages.at(-1);
        if (last?.role === 'tool') return `tool said: ${String(last.content)}`;
        const text = String(last?.content);
        return text.startsWith('call ') ? { tool: text.slice('call '.length), args: {} } : `offered: ${request.tools.join(',')}`;
      };
      const b = await start({ leaky: { command: process.execPath, args: [FIXTURE, 'leaky'], env: { LEAK_TOKEN: TOKEN }, access: 'everyone' } }, model);
      const asStranger = async (text: string) => (await b.send({ text, senderId: STRANGER }))[0]!;
      const protocol = await asStranger('call leaky__leak_error');
      assert.match(protocol, /The tool "leak_error" of the MCP server "leaky" failed: .*upstream refused the token \[hidden\]/);
      assert.match(await asStranger('call leaky__leak_result'), /reported an error[\s\S]*401 Unauthorized: Bearer \[hidden\] is not valid/);
      assert.match(await asStranger('call leaky__whoami'), /logged in as \[hidden\]/);
      assert.match(b.model.requests.at(-1)!.descriptions.leaky__whoami, /Says who it is \(token \[hidden\]\)/);
      assert.ok(!JSON.stringify(b.model.requests).includes(TOKEN), 'the token reached the model');
      assert.ok(b.logs().some((l) => /MCP tool "leak_error" of "leaky" failed: .*\[hidden\]/.test(String(l.msg))), 'the failure is logged');
      for (const [where, text] of [
        ['the replies', b.replies().join('\n')],
        ['the log', JSON.stringify(b.logs())],
        ["the dashboard's log view", tail.join('\n')],
      ] as const) {
        assert.ok(!text.includes(TOKEN), `the token reached ${where}`);
      }
    } finally {
      off();
    }
  });

  it('refuses a bad mcp.json with the file and the field named, and the bot still answers', async () => {
    const file = path.join(dir, 'mcp.json');
    await writeFile(file, JSON.stringify({ mcpServers: { broken: { command: 'x', args: 'not-a-list' }, empty: {} } }));
    bot = await startTestBot(mcp, { config: { owners: [OWNER] }, env: { MCP_CONFIG: file } });
    const status = bot.app.capabilities.status('mcp');
    assert.equal(status.ok, false);
    assert.ok(status.detail.includes(file), status.detail);
    assert.match(status.detail, /mcpServers\.broken\.args: expected array/);
    assert.match(status.detail, /mcpServers\.empty: needs "command"/);
    assert.ok(bot.logs().some((l) => String(l.msg).includes('MCP servers are off') && String(l.msg).includes('mcpServers.broken.args')));
    assert.deepEqual(await bot.send('hi'), ['model: hi']);
  });
});

describe('mcp plugin over streamable HTTP', function () {
  this.timeout(20_000);
  let web: Server | undefined;
  let bot: TestBot | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await bot?.stop();
    await new Promise((r) => (web ? web.close(r) : r(undefined)));
    if (dir) await rm(dir, { recursive: true, force: true });
    bot = web = dir = undefined;
  });

  it('calls a tool of a server at a url, sending the headers of its entry', async () => {
    const seen: string[] = [];
    // A real MCP server (the SDK's classes) on 127.0.0.1, stateless: one server per request.
    web = createServer(async (req, res) => {
      seen.push(String(req.headers.authorization));
      const server = new McpServer({ name: 'web', version: '1.0.0' });
      server.registerTool('shout', { description: 'Shouts', inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text: text.toUpperCase() }] }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((r) => web!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(web.address() as AddressInfo).port}/mcp`;
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcp-http-'));
    const file = path.join(dir, 'mcp.json');
    await writeFile(file, JSON.stringify({ mcpServers: { web: { url, headers: { Authorization: 'Bearer tok-http-777' } } } }));
    bot = await startTestBot(mcp, { config: { owners: [OWNER] }, env: { MCP_CONFIG: file }, model: callsTool('web__shout', { text: 'quiet words' }) });
    const [reply] = await bot.send('shout it');
    assert.match(reply, /QUIET WORDS/);
    assert.ok(seen.length > 0 && seen.every((h) => h === 'Bearer tok-http-777'), seen.join(','));
  });

  it('a server that echoes its header token: hides the Authorization header and its bare token from the reply, the log and the tool list', async () => {
    const TOKEN = 'tok-http-secret-9191';
    // A real MCP server on 127.0.0.1 that repeats the Authorization header it got in its answers and errors.
    web = createServer(async (req, res) => {
      const auth = String(req.headers.authorization);
      const server = new McpLowLevelServer({ name: 'echoer', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'check', description: `checks ${auth}`, inputSchema: { type: 'object', properties: {} } }] }));
      server.setRequestHandler(CallToolRequestSchema, async () => {
        throw new McpError(ErrorCode.InvalidRequest, `header "${auth}" rejected; bare token ${auth.split(' ')[1]}`);
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((r) => web!.listen(0, '127.0.0.1', r));
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcp-http-leak-'));
    const file = path.join(dir, 'mcp.json');
    const url = `http://127.0.0.1:${(web.address() as AddressInfo).port}/mcp`;
    await writeFile(file, JSON.stringify({ mcpServers: { echoer: { url, headers: { Authorization: `Bearer ${TOKEN}` }, access: 'everyone' } } }));
    bot = await startTestBot(mcp, { config: { owners: [OWNER] }, env: { MCP_CONFIG: file }, model: callsTool('echoer__check', {}) });
    const [reply] = await bot.send({ text: 'check it', senderId: STRANGER });
    assert.match(reply, /header "\[hidden\]" rejected; bare token \[hidden\]/);
    for (const [where, text] of [
      ['the reply', reply],
      ['the log', JSON.stringify(bot.logs())],
      ['what the model was sent', JSON.stringify(bot.model.requests)],
    ] as const) {
      assert.ok(!text.includes(TOKEN), `the token reached ${where}`);
    }
  });
});

/**
 * Answers `res` with `head`, then filler up to `total` bytes, honouring backpressure, until done or the bot hangs up;
 * resolves with the bytes the server got written (what the bot could have read).
 */
async function flood(res: ServerResponse, head: string, total: number): Promise<number> {
  const filler = Buffer.alloc(1024 * 1024, 'A');
  let written = 0;
  let closed = false;
  const hungUp = new Promise<void>((r) => res.once('close', () => r(void (closed = true))));
  res.write(head);
  written += head.length;
  while (written < total && !closed) {
    written += filler.length;
    if (!res.write(filler)) await Promise.race([new Promise((r) => res.once('drain', r)), hungUp]);
  }
  if (!closed) res.end();
  return written;
}

describe('mcp plugin over streamable HTTP: answers bounded by the bytes received', function () {
  this.timeout(60_000);
  const OFFERED = 512 * 1024 * 1024;
  let web: Server | undefined;
  let bot: TestBot | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await bot?.stop();
    web?.closeAllConnections();
    await new Promise((r) => (web ? web.close(r) : r(undefined)));
    if (dir) await rm(dir, { recursive: true, force: true });
    bot = web = dir = undefined;
  });

  /**
   * A real MCP server (the SDK's) on 127.0.0.1 whose tool "flood" answers with half a gigabyte — as one JSON answer
   * or as one endless event of a stream — and whose "shout" answers normally. Resolves with what each flood wrote.
   */
  async function serve(style: 'json' | 'event-stream'): Promise<{ floods: Promise<number>[] }> {
    const floods: Promise<number>[] = [];
    web = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      if (body?.method === 'tools/call' && body.params?.name === 'flood') {
        const start = `{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":{"content":[{"type":"text","text":"`;
        res.writeHead(200, { 'content-type': style === 'json' ? 'application/json' : 'text/event-stream' });
        floods.push(flood(res, style === 'json' ? start : `event: message\ndata: ${start}`, OFFERED));
        return;
      }
      const server = new McpServer({ name: 'flooder', version: '1.0.0' });
      server.registerTool('shout', { description: 'Shouts', inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text: text.toUpperCase() }] }));
      server.registerTool('flood', { description: 'Floods', inputSchema: {} }, async () => ({ content: [] }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: style === 'json' });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    });
    await new Promise<void>((r) => web!.listen(0, '127.0.0.1', r));
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcp-http-flood-'));
    const file = path.join(dir, 'mcp.json');
    await writeFile(file, JSON.stringify({ mcpServers: { flooder: { url: `http://127.0.0.1:${(web.address() as AddressInfo).port}/mcp` } } }));
    bot = await startTestBot(mcp, {
      config: { owners: [OWNER, OWNER2] },
      env: { MCP_CONFIG: file },
      model: (request: ModelRequest) => {
        const last = request.messages.at(-1);
        if (last?.role === 'tool') return `tool said: ${String(last.content)}`;
        const asked = String(request.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
        return /flood/.test(asked) ? { tool: 'flooder__flood', args: {} } : { tool: 'flooder__shout', args: { text: 'still here' } };
      },
    });
    return { floods };
  }

  for (const style of ['json', 'event-stream'] as const) {
    it(`a server answering a tool call with half a gigabyte (${style}): read up to the bound and no further, the call fails saying so, and the server stays usable`, async () => {
      const { floods } = await serve(style);
      const heapBefore = process.memoryUsage().heapUsed;
      const [reply] = await bot!.send('flood me');
      assert.match(reply, /MCP server "flooder" sent a message larger than 8 MB; it was cut off unread/);
      const written = await floods[0];
      // What the bot took in is the bound plus what the sockets buffer, not the half gigabyte on offer.
      assert.ok(written < 48 * 1024 * 1024, `the server got ${written} bytes written`);
      assert.ok(process.memoryUsage().heapUsed - heapBefore < 128 * 1024 * 1024, 'the heap grew by more than the bound');
      // The session goes on: the next call on the same server is answered (from another owner's chat: this chat's
      // answer repeated the server's words, so its next turns run no tool that acts).
      const [next] = await bot!.send({ text: 'shout please', senderId: `${OWNER2}@s.whatsapp.net`, chatId: `${OWNER2}@s.whatsapp.net` });
      assert.match(next, /STILL HERE/);
    });
  }
});

describe('mcp plugin beside other plugins', function () {
  this.timeout(30_000);
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('reads mcp.json beside config.json, reports a server whose command does not exist, and .ping still answers', async () => {
    const dir = await tempDir('mcp-app-');
    await writeFile(path.join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { ghost: { command: 'no-such-mcp-server-cmd', args: [] } } }));
    t = await startTestBot([ping, mcp], { dir, config: { owners: [OWNER] } });
    const actions = await t.transport.push({ text: '.ping' });
    assert.ok(actions.some((a) => a.type === 'text' && /pong/i.test(a.text)), JSON.stringify(actions));
    assert.ok(t.logs().some((l) => /MCP server "ghost" is down: failed to start: the command "no-such-mcp-server-cmd" was not found/.test(String(l.msg))));
    assert.match(t.app.capabilities.status('mcp').detail, /ghost: DOWN, failed to start: the command "no-such-mcp-server-cmd" was not found/);
    // The start-log table names it too.
    assert.ok(t.logs().some((l) => String(l.msg).includes('ghost: DOWN')));
    // The folder goes once the bot has stopped: its stop still writes its data there.
    await t.stop();
    t = undefined;
    await rm(dir, { recursive: true, force: true });
  });
});

describe('mcp plugin: names and paths', () => {
  it('name-spaces tools as <server>__<tool> in the characters the API allows, cut to 64', () => {
    assert.equal(offeredName('home assistant', 'lights.on'), 'home_assistant__lights_on');
    const long = offeredName('s'.repeat(40), 't'.repeat(40));
    assert.equal(long.length, 64);
    assert.match(long, /^s{40}__t{22}$/);
  });

  it('finds mcp.json beside config.json, or where MCP_CONFIG says (relative to config.json)', () => {
    assert.equal(mcpConfigPath('/etc/bot/config.json', undefined), '/etc/bot/mcp.json');
    assert.equal(mcpConfigPath('/etc/bot/config.json', 'servers/tools.json'), '/etc/bot/servers/tools.json');
    assert.equal(mcpConfigPath('/etc/bot/config.json', '/opt/mcp.json'), '/opt/mcp.json');
  });
});
