import { expect } from 'chai';
import path from 'node:path';
import { lastText, startTestBot, type TestBot } from '../../app/testing/index.js';
import { parseScopes } from '../../core/services/automation/scopes.js';
import pingPlugin from '../../plugins/ping/index.js';
import { apiRouter, servedApiRoutes } from '../../web/api-routes.js';
import { openApiDocument } from '../../web/api-openapi.js';
import { startWebServer, type WebServer } from '../../web/server.js';
import { ALICE, BOB, CAROL, FAST_SENDING, UNPACED_SENDS } from '../helpers/chat.js';
import { storeDatabaseText } from '../helpers/disk-text.js';
import { request } from './web-helpers.js';

const OWNER_DIGITS = ALICE.split('@')[0]!;
/** Someone who never wrote to the bot. */
const DAVE = '6281100000004@s.whatsapp.net';
const digits = (id: string) => id.split('@')[0]!;

describe('the local HTTP API (/api/v1, scoped bearer tokens)', function () {
  this.timeout(60_000);
  let t: TestBot;
  let web: WebServer;

  /** One API request over real HTTP on 127.0.0.1: the status and the JSON answer. */
  async function api(method: string, route: string, options: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; json: any }> {
    const headers: Record<string, string> = { ...(options.token ? { authorization: `Bearer ${options.token}` } : {}), ...(options.body !== undefined || options.raw !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers };
    const response = await fetch(`http://127.0.0.1:${web.port}${route}`, { method, headers, ...(options.raw !== undefined ? { body: options.raw } : options.body !== undefined ? { body: JSON.stringify(options.body) } : {}) });
    return { status: response.status, json: await response.json() };
  }
  const token = (name: string, scopes: string) => t.app.automation.tokens.create(name, parseScopes(scopes)).token;
  const textsTo = (chatId: string) => t.transport.actions.filter((a) => a.type === 'text' && a.chatId === chatId).map((a) => (a as { text: string }).text);

  beforeEach(async () => {
    t = await startTestBot([pingPlugin], { sendPacing: UNPACED_SENDS, config: { owners: [OWNER_DIGITS], access: { mode: 'everyone' }, sending: FAST_SENDING, port: 0 } });
    web = await startWebServer(t.app, () => t.transport);
    // Bob and Carol wrote to the bot (and were answered): the bot may write to them first.
    await t.send({ text: 'hello from Bob', chatId: BOB, senderId: BOB, senderName: 'Bob' });
    await t.send({ text: 'hello from Carol', chatId: CAROL, senderId: CAROL, senderName: 'Carol' });
  });
  afterEach(async () => {
    await web.close();
    await t.stop();
  });

  it('sends with send:<chat> through the outbox, and refuses (403) another chat', async () => {
    const secret = token('home-assistant', `send:${digits(BOB)}`);
    const sent = await api('POST', '/api/v1/messages', { token: secret, body: { to: `+${digits(BOB)}`, text: 'The washing machine is done' } });
    expect(sent.status, JSON.stringify(sent.json)).to.equal(200);
    expect(sent.json).to.deep.include({ status: 'sent', to: BOB });
    expect(sent.json.id).to.be.a('string').and.not.equal('');
    expect(textsTo(BOB)).to.include('The washing machine is done');

    const elsewhere = await api('POST', '/api/v1/messages', { token: secret, body: { to: CAROL, text: 'not for Carol' } });
    expect(elsewhere.status).to.equal(403);
    expect(elsewhere.json.error.code).to.equal('API_SCOPE_REFUSED');
    expect(elsewhere.json.error.message).to.include(`send:${CAROL}`);
    expect(textsTo(CAROL)).to.not.include('not for Carol');
  });

  it('refuses (403 API_RECIPIENT_REFUSED) a chat in its scopes that the bot may not write to first', async () => {
    const secret = token('script', `send:${digits(DAVE)}`);
    const refused = await api('POST', '/api/v1/messages', { token: secret, body: { to: DAVE, text: 'hi stranger' } });
    expect(refused.status).to.equal(403);
    expect(refused.json.error.code).to.equal('API_RECIPIENT_REFUSED');
    expect(textsTo(DAVE)).to.deep.equal([]);
  });

  it('follows the guard policy: a held message waits for the owner (202), a denied one is refused (403)', async () => {
    const secret = token('n8n', `send:${digits(BOB)}`);
    t.app.bot.setConfig({ ...t.app.config, guard: { kinds: { message: 'hold' } } });
    const held = await api('POST', '/api/v1/messages', { token: secret, body: { to: BOB, text: 'after your OK' } });
    expect(held.status).to.equal(202);
    expect(held.json).to.deep.include({ status: 'held', to: BOB });
    expect(textsTo(ALICE).at(-1)).to.include(`⏳ Waiting for your OK (${held.json.holdId})`);
    expect(textsTo(BOB)).to.not.include('after your OK');
    // The owner's 👍 sends it.
    await t.send({ text: `.yes ${held.json.holdId}`, chatId: ALICE, senderId: ALICE });
    expect(textsTo(BOB)).to.include('after your OK');

    t.app.bot.setConfig({ ...t.app.config, guard: { others: { here: 'deny', elsewhere: 'deny' } } });
    const denied = await api('POST', '/api/v1/messages', { token: secret, body: { to: BOB, text: 'never' } });
    expect(denied.status).to.equal(403);
    expect(denied.json.error.code).to.equal('API_GUARD_DENIED');
    expect(textsTo(BOB)).to.not.include('never');
  });

  it('answers 401 without a token, with an unknown one and with a revoked one', async () => {
    const secret = token('soon-gone', 'chats');
    expect((await api('GET', '/api/v1/chats', { token: secret })).status).to.equal(200);
    const none = await api('GET', '/api/v1/chats');
    expect([none.status, none.json.error.code]).to.deep.equal([401, 'API_TOKEN_MISSING']);
    const unknown = await api('GET', '/api/v1/chats', { token: `wabot_0123456789ab_${'x'.repeat(43)}` });
    expect([unknown.status, unknown.json.error.code]).to.deep.equal([401, 'API_TOKEN_INVALID']);
    t.app.automation.tokens.revoke('soon-gone');
    const revoked = await api('POST', '/api/v1/messages', { token: secret, body: { to: BOB, text: 'x' } });
    expect([revoked.status, revoked.json.error.code]).to.deep.equal([401, 'API_TOKEN_INVALID']);
  });

  it('lists and reads only the chats a read scope names; chats lists every chat the bot knows', async () => {
    const reader = token('reader', `read:${digits(BOB)}`);
    const listed = await api('GET', '/api/v1/chats', { token: reader });
    expect(listed.json.chats).to.deep.equal([{ id: BOB, kind: 'private', may: ['read'] }]);
    const read = await api('GET', `/api/v1/chats/${encodeURIComponent(BOB)}/messages?limit=10`, { token: reader });
    expect(read.status).to.equal(200);
    expect(read.json.messages.map((m: { text: string; fromBot: boolean }) => [m.fromBot, m.text])).to.deep.equal([
      [false, 'hello from Bob'],
      [true, 'model: hello from Bob'],
    ]);
    expect(read.json.messages[0]).to.include({ from: BOB, name: 'Bob' });
    const other = await api('GET', `/api/v1/chats/${digits(CAROL)}/messages`, { token: reader });
    expect([other.status, other.json.error.code]).to.deep.equal([403, 'API_SCOPE_REFUSED']);
    expect(JSON.stringify(other.json)).to.not.include('hello from Carol');
    const badLimit = await api('GET', `/api/v1/chats/${digits(BOB)}/messages?limit=100000`, { token: reader });
    expect([badLimit.status, badLimit.json.error.code]).to.deep.equal([400, 'API_BAD_REQUEST']);

    const everything = await api('GET', '/api/v1/chats', { token: token('lister', 'chats') });
    expect(everything.json.chats.map((c: { id: string }) => c.id)).to.include.members([BOB, CAROL]);
    expect(everything.json.chats.every((c: { may: string[] }) => c.may.length === 0)).to.equal(true);
  });

  it("runs a prompt in the chat and delivers the fake upstream's answer there", async () => {
    const secret = token('daily-report', `prompt:${digits(BOB)}`);
    const before = t.model.requests.length;
    const done = await api('POST', '/api/v1/prompts', { token: secret, body: { to: BOB, prompt: 'Write the daily report' } });
    expect(done.status, JSON.stringify(done.json)).to.equal(200);
    expect(done.json).to.deep.include({ status: 'sent', to: BOB, answer: 'model: Write the daily report' });
    expect(t.model.requests.length).to.equal(before + 1);
    expect(lastText(t.model.requests.at(-1)!)).to.equal('Write the daily report');
    expect(textsTo(BOB).at(-1)).to.equal('model: Write the daily report');
    // The prompt scope is not a send scope.
    const send = await api('POST', '/api/v1/messages', { token: secret, body: { to: BOB, text: 'x' } });
    expect(send.json.error.code).to.equal('API_SCOPE_REFUSED');
  });

  it('keeps every token secret out of the log and the store files, even one sent where it is logged', async () => {
    const secret = token('home-assistant', `send:${digits(BOB)}`);
    await api('POST', '/api/v1/messages', { token: secret, body: { to: BOB, text: 'logged?' } });
    await api('GET', `/api/v1/chats/${secret}/messages`, { token: secret });
    await api('GET', '/api/v1/chats', { headers: { authorization: `Bearer ${secret.slice(0, -2)}zz` } });
    const log = t.logs().map((l) => JSON.stringify(l)).join('\n');
    const secretPart = secret.slice('wabot_'.length + 13);
    expect(log).to.include('api: POST /api/v1/messages → 200');
    expect(log).to.include('"apiToken":"home-assistant"');
    expect(log).to.not.include(secretPart.slice(0, 20));
    expect(await storeDatabaseText(path.join(t.dir, 'data'))).to.not.include(secretPart.slice(0, 20));
  });

  it('describes every route it serves in GET /api/openapi.json (OpenAPI 3.1), and nothing it does not serve', async () => {
    const doc = await api('GET', '/api/openapi.json');
    expect(doc.status).to.equal(200);
    expect(doc.json.openapi).to.equal('3.1.0');
    expect(doc.json).to.deep.equal(JSON.parse(JSON.stringify(openApiDocument())));
    const served = servedApiRoutes(apiRouter(t.app)).map((r) => `${r.method} ${r.path}`).sort();
    const described = Object.entries(doc.json.paths as Record<string, Record<string, unknown>>).flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m} ${p}`)).sort();
    expect(served).to.include('post /api/v1/messages');
    expect(described).to.deep.equal(served);
  });

  it('answers JSON errors for an unknown route, bad JSON and a body too large, and keeps the Host guard', async () => {
    const secret = token('x', `send:${digits(BOB)}`);
    const missing = await api('GET', '/api/v1/nothing', { token: secret });
    expect([missing.status, missing.json.error.code]).to.deep.equal([404, 'API_NOT_FOUND']);
    const badJson = await api('POST', '/api/v1/messages', { token: secret, raw: '{"to":' });
    expect([badJson.status, badJson.json.error.code]).to.deep.equal([400, 'API_BAD_REQUEST']);
    const noText = await api('POST', '/api/v1/messages', { token: secret, body: { to: BOB } });
    expect([noText.status, noText.json.error.code]).to.deep.equal([400, 'API_BAD_REQUEST']);
    const huge = await api('POST', '/api/v1/messages', { token: secret, body: { to: BOB, text: 'x'.repeat(70_000) } });
    expect([huge.status, huge.json.error.code]).to.deep.equal([413, 'API_BODY_TOO_LARGE']);
    expect(textsTo(BOB).some((text) => text.startsWith('xxxx'))).to.equal(false);
    const rebinding = await request(web.port, { path: '/api/v1/chats', headers: { host: 'evil.example', authorization: `Bearer ${secret}` } });
    expect(rebinding.status).to.equal(421);
  });
});
