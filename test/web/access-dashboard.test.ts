import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { storedDocuments } from '../helpers/disk-text.js';
import path from 'node:path';
import { emptyAccess } from '../../core/kernel/access/access-store.js';
import pingPlugin from '../../plugins/ping/index.js';
import { FakeGateway } from '../fakes/openai-gateway.js';
import { SHIPPED_RULES } from './access-helpers.js';
import { csrfOf, login, request, sameOrigin, startWebTest, TOKEN, type RawResponse, type WebTest } from './web-helpers.js';

const STRANGER = '62811111111@s.whatsapp.net';
const OTHER = '62833333333@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const MEMBER = '62822222222@s.whatsapp.net';

type Message = { role: string; content: unknown };
const lastUserText = (req: { json?: any }) => String([...((req.json?.messages ?? []) as Message[])].reverse().find((m) => m.role === 'user')?.content ?? '');
const systemOf = (req: { json?: any }) => String(((req.json?.messages ?? []) as Message[]).find((m) => m.role === 'system')?.content ?? '');

describe('dashboard access view (HTTP)', function () {
  this.timeout(30_000);
  let gw: FakeGateway;
  let w: WebTest;
  let cookie: string;

  const page = () => request(w.port, { path: '/config/access', headers: { cookie } });
  const post = async (action: string, fields: Record<string, string>, headers: Record<string, string> = sameOrigin(w.port)): Promise<RawResponse> => {
    const csrf = csrfOf((await page()).body);
    return request(w.port, { method: 'POST', path: `/config/access/${action}`, headers: { cookie, ...headers }, body: new URLSearchParams({ _csrf: csrf, ...fields }).toString() });
  };
  const state = async () => {
    await w.t.app.bot.access.flush();
    // Kept in the store database (the core's access document); none yet: nothing was ever decided.
    return (storedDocuments(path.join(w.t.dir, 'data'), 'core', 'access')[''] ?? emptyAccess()) as any;
  };
  /** A stranger writes privately (shipped access.mode "pairing"); returns the pairing code they were given. */
  const strangerWrites = async (text: string, senderName?: string, senderId = STRANGER) => {
    const actions = await w.t.transport.push({ senderId, senderName, text });
    const answer = actions.find((a) => a.type === 'text');
    const code = /pairing code is ([A-Z0-9]{6,8})\b/.exec(answer?.type === 'text' ? answer.text : '')?.[1];
    if (!code) throw new Error(`no pairing code in ${JSON.stringify(actions)}`);
    return code;
  };

  beforeEach(async () => {
    gw = await FakeGateway.start('model');
    w = await startWebTest({ token: TOKEN, plugins: [pingPlugin], env: { API_KEY: 'k-access-dash', BASE_URL: gw.url, MODEL: 'm' }, config: SHIPPED_RULES });
    ({ cookie } = await login(w.port, TOKEN));
  });
  afterEach(async () => {
    await w.stop();
    await gw.close();
  });

  it('needs the session for the view and the session CSRF token for every change', async () => {
    const code = await strangerWrites('let me in');
    const anonymous = await request(w.port, { path: '/config/access' });
    expect(anonymous.status).to.equal(303);
    expect(anonymous.headers.location).to.equal('/config/login');
    const noSession = await request(w.port, { method: 'POST', path: '/config/access/approve', headers: sameOrigin(w.port), body: new URLSearchParams({ code }).toString() });
    expect(noSession.status).to.equal(401);
    for (const [action, fields] of [
      ['approve', { code }],
      ['deny', { code }],
      ['activation', { chat: GROUP, mode: 'always' }],
      ['persona', { chat: OTHER, text: 'be brief', action: 'save' }],
    ] as const) {
      const res = await request(w.port, { method: 'POST', path: `/config/access/${action}`, headers: { cookie, ...sameOrigin(w.port) }, body: new URLSearchParams(fields).toString() });
      expect(res.status, action).to.equal(403);
    }
    const s = await state();
    expect(s.pending.map((p: { code: string }) => p.code)).to.deep.equal([code]);
    expect(s.approved).to.deep.equal([]);
    expect(s.groups).to.deep.equal({});
    expect(s.personas).to.deep.equal({});
    expect(gw.chats()).to.have.length(0);
  });

  it('refuses a cross-site approve even with a valid session and CSRF token: the stranger stays out', async () => {
    const code = await strangerWrites('let me in');
    const res = await post('approve', { code }, { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(res.status).to.equal(403);
    expect(w.t.app.bot.access.pending().map((p) => p.code)).to.deep.equal([code]);
    expect((await state()).approved).to.deep.equal([]);
    expect(gw.chats()).to.have.length(0);
  });

  it('approving a code lets the stranger in and answers what they sent meanwhile, as .approve does', async () => {
    const code = await strangerWrites('first question', 'Sari');
    await w.t.transport.push({ senderId: STRANGER, text: 'second question' });
    expect(gw.chats(), 'nothing reaches the model before approval').to.have.length(0);
    const listed = await page();
    expect(listed.body).to.contain(code).and.contain('Sari').and.contain('first question').and.contain('second question');

    const res = await post('approve', { code });
    expect(res.status).to.equal(303);
    expect(res.headers.location).to.match(/done=approved&who=62811111111&n=2$/);
    await gw.http.until(() => gw.chats().length === 2);
    expect(gw.chats().map(lastUserText)).to.deep.equal(['first question', 'second question']);
    await w.t.until(() => w.t.transport.texts().includes('model: second question'));
    const done = await request(w.port, { path: res.headers.location!, headers: { cookie } });
    expect(done.body).to.contain('Approved: +62811111111 can talk to the bot now. Answering the 2 messages');
    expect(done.body).not.to.contain(`data-code="${code}"`);
    expect((await state()).approved.map((a: { id: string; by: string }) => [a.id, a.by])).to.deep.equal([['62811111111', 'dashboard']]);
    // In for good: answered at once from now on.
    const next = await w.t.transport.push({ senderId: STRANGER, text: 'now I am in' });
    expect(next.some((a) => a.type === 'text' && a.text === 'model: now I am in')).to.equal(true);
    // The code is used up.
    const again = await post('approve', { code });
    expect(again.status).to.equal(404);
    expect(again.body).to.contain(`No pairing request has the code ${code}`);
  });

  it('deny drops the held messages; a wrong code is refused in words; remove takes an approved sender off the list', async () => {
    const code = await strangerWrites('please');
    const wrong = await post('deny', { code: 'ZZZZ2222' });
    expect(wrong.status).to.equal(404);
    expect(wrong.body).to.contain('No pairing request has the code ZZZZ2222');
    const res = await post('deny', { code });
    expect(res.status).to.equal(303);
    expect((await page()).body).not.to.contain(`data-code="${code}"`);
    const later = await w.t.transport.push({ senderId: STRANGER, text: 'again' });
    expect(later.filter((a) => a.type === 'text'), 'no new code at once').to.deep.equal([]);
    expect(gw.chats()).to.have.length(0);

    const other = await strangerWrites('hi', undefined, OTHER);
    await post('approve', { code: other });
    await gw.http.until(() => gw.chats().length === 1);
    expect((await post('revoke', { id: '62833333333' })).status).to.equal(303);
    expect((await state()).approved).to.deep.equal([]);
    const refused = await w.t.transport.push({ senderId: OTHER, text: 'still there?' });
    expect(refused.some((a) => a.type === 'text' && a.text.startsWith('model:'))).to.equal(false);
    expect(gw.chats()).to.have.length(1);
  });

  it("shows a sender's name and held text as text, never as markup", async () => {
    const code = await strangerWrites('<script>alert("held")</script>', '<img src=x onerror=alert(1)>');
    const body = (await page()).body;
    expect(body).to.contain(code);
    expect(body).to.contain('&lt;img src=x onerror=alert(1)&gt;').and.contain('&lt;script&gt;alert(&quot;held&quot;)&lt;/script&gt;');
    expect(body).not.to.contain('<img src=x').and.not.to.contain('<script>alert');
  });

  it('sets a group activation (persisted; the group is answered accordingly) and refuses a bad group id or mode', async () => {
    expect((await w.t.transport.push({ chatId: GROUP, senderId: MEMBER, text: 'anyone?' })).filter((a) => a.type === 'text')).to.deep.equal([]);
    const bad = await post('activation', { chat: 'not-a-group', mode: 'always' });
    expect(bad.status).to.equal(422);
    expect(bad.body).to.contain('A group id ends in @g.us').and.contain('value="not-a-group"').and.contain('aria-invalid="true"');
    expect((await post('activation', { chat: GROUP, mode: 'loud' })).status).to.equal(422);
    expect((await state()).groups).to.deep.equal({});

    expect((await post('activation', { chat: GROUP, mode: 'always' })).status).to.equal(303);
    expect((await state()).groups[GROUP].mode).to.equal('always');
    const answered = await w.t.transport.push({ chatId: GROUP, senderId: MEMBER, text: 'no mention here' });
    expect(answered.some((a) => a.type === 'text' && a.text.includes('no mention here'))).to.equal(true);
    const shown = (await page()).body;
    expect(shown).to.match(/<option value="always" selected>/);

    expect((await post('activation', { chat: GROUP, mode: 'off' })).status).to.equal(303);
    expect((await state()).groups[GROUP].mode).to.equal('off');
    const calls = gw.chats().length;
    await w.t.transport.push({ chatId: GROUP, senderId: MEMBER, text: 'quiet now?' });
    expect(gw.chats()).to.have.length(calls);
  });

  it('a persona is saved for its chat only, shown escaped, limited to 2,000 characters, and removable', async () => {
    const persona = '<script>alert("persona")</script> Speak like a pirate.';
    expect((await post('persona', { chat: '62833333333', text: persona, action: 'save' })).status).to.equal(303);
    const body = (await page()).body;
    expect(body).to.contain('&lt;script&gt;alert(&quot;persona&quot;)&lt;/script&gt; Speak like a pirate.');
    expect(body).not.to.contain('<script>alert');
    expect((await state()).personas[OTHER].text).to.equal(persona);

    // Only that chat's system prompt carries it.
    await w.t.app.bot.access.setActivation(GROUP, 'always', 'test');
    await w.t.transport.push({ chatId: GROUP, senderId: MEMBER, text: 'hello group' });
    await w.t.app.bot.access.approve(await strangerWrites('hi', undefined, OTHER), 'test');
    await gw.http.until(() => gw.chats().length === 2);
    const [group, own] = [gw.chats().find((r) => lastUserText(r).includes('hello group'))!, gw.chats().find((r) => lastUserText(r) === 'hi')!];
    expect(systemOf(own)).to.contain('Speak like a pirate.');
    expect(systemOf(group)).not.to.contain('pirate');

    const tooLong = await post('persona', { chat: OTHER, text: 'x'.repeat(2001), action: 'save' });
    expect(tooLong.status).to.equal(422);
    expect(tooLong.body).to.contain('a persona is at most 2000 characters (this one has 2001)');
    expect((await state()).personas[OTHER].text).to.equal(persona);
    // Line breaks as a browser sends them (CRLF) count as one character, as in `.persona`.
    const full = `${'y'.repeat(999)}\r\n${'z'.repeat(1000)}`;
    expect((await post('persona', { chat: OTHER, text: full, action: 'save' })).status).to.equal(303);
    expect((await state()).personas[OTHER].text).to.have.length(2000);

    expect((await post('persona', { chat: 'nobody', text: 'hi', action: 'save' })).status).to.equal(422);
    expect((await post('persona', { chat: OTHER, text: '', action: 'remove' })).status).to.equal(303);
    expect((await state()).personas).to.deep.equal({});
  });

  it('lists a chat taken over from the phone and hands it back, as .bot on does', async () => {
    await w.t.app.bot.access.approve(await strangerWrites('hi'), 'test');
    await gw.http.until(() => gw.chats().length === 1);
    await w.t.transport.push({ ...w.t.transport.message({ chatId: STRANGER, senderId: '62899999999@s.whatsapp.net', text: 'I answer this one myself' }), fromMe: true });
    const quiet = await w.t.transport.push({ senderId: STRANGER, text: 'are you there?' });
    expect(quiet.filter((a) => a.type === 'text')).to.deep.equal([]);
    const listed = (await page()).body;
    expect(listed).to.contain(`data-chat="${STRANGER}"`).and.contain('written from the phone');

    expect((await post('resume', { chat: 'someone@s.whatsapp.net' })).status).to.equal(404);
    expect((await post('resume', { chat: STRANGER })).status).to.equal(303);
    expect((await state()).paused).to.deep.equal({});
    const back = await w.t.transport.push({ senderId: STRANGER, text: 'and now?' });
    expect(back.some((a) => a.type === 'text' && a.text === 'model: and now?')).to.equal(true);
  });
});
