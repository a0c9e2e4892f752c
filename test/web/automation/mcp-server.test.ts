import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { parseScopes } from '../../../core/operator.js';
import pingPlugin from '../../../plugins/ping/index.js';
import { startWebServer, type WebServer } from '../../../web/server.js';
import { ROOT } from '../../helpers/checkout.js';
import { ALICE, BOB, CAROL, FAST_SENDING, UNPACED_SENDS } from '../../helpers/chat.js';

const OWNER_DIGITS = ALICE.split('@')[0]!;
const digits = (id: string) => id.split('@')[0]!;

interface ToolAnswer {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
}
const textOf = (answer: unknown) => (answer as ToolAnswer).content.map((c) => c.text).join('\n');
const jsonOf = (answer: unknown) => JSON.parse(textOf(answer)) as any;

describe('the bot as an MCP server (official SDK client over Streamable HTTP, API token scopes)', function () {
  this.timeout(60_000);
  let t: TestBot;
  let web: WebServer;
  const clients: Client[] = [];

  const token = (name: string, scopes: string) => t.app.automation.tokens.create(name, parseScopes(scopes)).token;
  const textsTo = (chatId: string) => t.transport.actions.filter((a) => a.type === 'text' && a.chatId === chatId).map((a) => (a as { text: string }).text);

  async function connect(secret: string): Promise<Client> {
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${web.port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
    clients.push(client);
    return client;
  }

  beforeEach(async () => {
    t = await startTestBot([pingPlugin], { sendPacing: UNPACED_SENDS, config: { owners: [OWNER_DIGITS], access: { mode: 'everyone' }, sending: FAST_SENDING, port: 0 } });
    web = await startWebServer(t.app, () => t.transport);
    // Bob and Carol wrote to the bot: it may write to them first.
    await t.send({ text: 'hello from Bob about the boat', chatId: BOB, senderId: BOB, senderName: 'Bob' });
    await t.send({ text: 'hello from Carol', chatId: CAROL, senderId: CAROL, senderName: 'Carol' });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await web.close();
    await t.stop();
  });

  it('lists its tools and the chats the token may see', async () => {
    const everything = await connect(token('agent', `chats,send:${digits(BOB)},read:${digits(BOB)}`));
    expect((await everything.listTools()).tools.map((tool) => tool.name)).to.have.members(['list_chats', 'read_messages', 'search_messages', 'send_message']);
    const all = jsonOf(await everything.callTool({ name: 'list_chats', arguments: {} }));
    expect(all.map((c: { id: string }) => c.id)).to.include.members([BOB, CAROL]);
    expect(all.find((c: { id: string }) => c.id === BOB).may).to.have.members(['send', 'read']);
    const narrow = await connect(token('reader', `read:${digits(BOB)}`));
    expect(jsonOf(await narrow.callTool({ name: 'list_chats', arguments: {} })).map((c: { id: string }) => c.id)).to.deep.equal([BOB]);
  });

  it('sends to a chat of the token\'s send: scope through the guard and the outbox', async () => {
    const client = await connect(token('agent', `send:${digits(BOB)}`));
    const answer = await client.callTool({ name: 'send_message', arguments: { to: digits(BOB), text: 'The boat is ready' } });
    expect((answer as ToolAnswer).isError, textOf(answer)).to.not.equal(true);
    expect(jsonOf(answer)).to.deep.include({ status: 'sent', to: BOB });
    expect(textsTo(BOB)).to.include('The boat is ready');
  });

  it('holds a send outside the token\'s scopes for the owner\'s 👍, and sends it only then', async () => {
    const client = await connect(token('agent', `send:${digits(BOB)}`));
    const answer = jsonOf(await client.callTool({ name: 'send_message', arguments: { to: digits(CAROL), text: 'Carol, dinner at 8?' } }));
    expect(answer.status).to.equal('held');
    expect(textsTo(CAROL)).to.not.include('Carol, dinner at 8?');
    const asked = textsTo(ALICE).find((text) => text.includes(`(${answer.holdId})`));
    expect(asked).to.contain('Carol, dinner at 8?');
    await t.send({ text: `.yes ${answer.holdId}`, chatId: ALICE, senderId: ALICE });
    expect(textsTo(CAROL)).to.include('Carol, dinner at 8?');
  });

  it('sends a poll and a picture with send_message as the API does; one outside the scopes is held, a bad one is refused', async () => {
    const client = await connect(token('agent', `send:${digits(BOB)}`));
    const poll = await client.callTool({ name: 'send_message', arguments: { to: digits(BOB), poll: { question: 'Sail on Sunday?', options: ['yes', 'no'] } } });
    expect(jsonOf(poll), textOf(poll)).to.deep.include({ status: 'sent', to: BOB });
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const picture = await client.callTool({ name: 'send_message', arguments: { to: digits(BOB), media: { kind: 'image', data: png, caption: 'The boat' } } });
    expect(jsonOf(picture), textOf(picture)).to.deep.include({ status: 'sent', to: BOB });
    const sent = t.transport.actions.filter((a) => a.chatId === BOB && (a.type === 'poll' || a.type === 'media'));
    expect(sent.map((a) => a.type)).to.deep.equal(['poll', 'media']);
    expect(sent[1]).to.deep.nested.include({ 'media.kind': 'image', 'media.mimetype': 'image/png', 'media.caption': 'The boat' });

    const held = jsonOf(await client.callTool({ name: 'send_message', arguments: { to: digits(CAROL), poll: { question: 'Dinner at 8?', options: ['yes', 'no'] } } }));
    expect(held.status).to.equal('held');
    expect(textsTo(ALICE).find((text) => text.includes(`(${held.holdId})`))).to.contain('a poll “Dinner at 8?” (yes / no)');
    await t.send({ text: `.yes ${held.holdId}`, chatId: ALICE, senderId: ALICE });
    expect(t.transport.actions.filter((a) => a.type === 'poll' && a.chatId === CAROL)).to.have.length(1);

    const bad = await client.callTool({ name: 'send_message', arguments: { to: digits(BOB), poll: { question: 'Q?', options: ['only'] } } });
    expect((bad as ToolAnswer).isError).to.equal(true);
    expect(textOf(bad)).to.match(/^API_BAD_POLL: a poll has 2 to 12 options/);
    // Outside the scopes too: checked before the owner is asked.
    const badHeld = await client.callTool({ name: 'send_message', arguments: { to: digits(CAROL), media: { kind: 'image', data: 'not base64!' } } });
    expect(textOf(badHeld)).to.match(/^API_BAD_MEDIA/);
  });

  it('refuses a send for a token that may send nowhere (no hold asked), and reads only its read: chats', async () => {
    const client = await connect(token('reader', `read:${digits(BOB)}`));
    const send = await client.callTool({ name: 'send_message', arguments: { to: digits(BOB), text: 'from a reader' } });
    expect((send as ToolAnswer).isError).to.equal(true);
    expect(textOf(send)).to.match(/^API_SCOPE_REFUSED/);
    expect(textsTo(BOB)).to.not.include('from a reader');
    expect(textsTo(ALICE).some((text) => text.includes('from a reader'))).to.equal(false);

    const read = jsonOf(await client.callTool({ name: 'read_messages', arguments: { chat: digits(BOB) } }));
    expect(read.messages.map((m: { text: string }) => m.text)).to.include('hello from Bob about the boat');
    const other = await client.callTool({ name: 'read_messages', arguments: { chat: digits(CAROL) } });
    expect((other as ToolAnswer).isError).to.equal(true);
    expect(textOf(other)).to.match(/^API_SCOPE_REFUSED/);
  });

  it('searches one chat at a time, within its read: scope', async () => {
    const client = await connect(token('reader', `read:${digits(BOB)}`));
    const found = jsonOf(await client.callTool({ name: 'search_messages', arguments: { chat: digits(BOB), query: 'BOAT' } }));
    // Bob's words and the bot's answer repeating them; nothing of another chat.
    expect(found.messages.map((m: { text: string }) => m.text)).to.include('hello from Bob about the boat');
    expect(found.messages.every((m: { text: string }) => /boat/i.test(m.text))).to.equal(true);
    expect(jsonOf(await client.callTool({ name: 'search_messages', arguments: { chat: digits(BOB), query: 'dinner' } })).messages).to.deep.equal([]);
    const elsewhere = await client.callTool({ name: 'search_messages', arguments: { chat: digits(CAROL), query: 'hello' } });
    expect((elsewhere as ToolAnswer).isError).to.equal(true);
    expect(textOf(elsewhere)).to.not.contain('hello from Carol');
  });

  it('refuses a missing, wrong or revoked token with 401, and never logs a token', async () => {
    const bare = await fetch(`http://127.0.0.1:${web.port}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(bare.status).to.equal(401);
    expect(((await bare.json()) as { error: { code: string } }).error.code).to.equal('API_TOKEN_MISSING');
    const secret = token('agent', `send:${digits(BOB)}`);
    let refused: unknown;
    await connect(`${secret.slice(0, -4)}AAAA`).catch((err: unknown) => (refused = err));
    expect(String(refused)).to.match(/401|Unauthorized|API_TOKEN_INVALID/);
    const client = await connect(secret);
    expect((await client.listTools()).tools).to.have.length(4);
    t.app.automation.tokens.revoke('agent');
    let revoked: unknown;
    await client.listTools().catch((err: unknown) => (revoked = err));
    expect(String(revoked)).to.match(/401|Unauthorized|API_TOKEN_INVALID/);
    expect(JSON.stringify(t.logs())).to.not.contain(secret.slice(-20));
  });

  it('npm run --silent mcp serves the same tools on stdio, relaying to the running bot with the token from the environment', async () => {
    const secret = token('desktop', `chats,send:${digits(BOB)}`);
    const empty = await mkdtemp(path.join(os.tmpdir(), 'mcp-stdio-'));
    let stderr = '';
    const client = new Client({ name: 'desktop', version: '1.0.0' });
    const stdio = new StdioClientTransport({
      command: 'npm',
      args: ['run', '--silent', 'mcp'],
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', BOT_API_TOKEN: secret, BOT_MCP_URL: `http://127.0.0.1:${web.port}/mcp`, DATA_DIR: empty },
      stderr: 'pipe',
    });
    stdio.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      await client.connect(stdio);
      expect((await client.listTools()).tools.map((tool) => tool.name)).to.include('send_message');
      const chats = jsonOf(await client.callTool({ name: 'list_chats', arguments: {} }));
      expect(chats.map((c: { id: string }) => c.id)).to.include(BOB);
      const sent = jsonOf(await client.callTool({ name: 'send_message', arguments: { to: digits(BOB), text: 'via stdio' } }));
      expect(sent.status).to.equal('sent');
      expect(textsTo(BOB)).to.include('via stdio');
      expect(stderr).to.not.contain(secret);
    } finally {
      await client.close();
      await rm(empty, { recursive: true, force: true });
    }
  });
});
