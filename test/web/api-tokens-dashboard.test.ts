import { expect } from 'chai';
import { csrfOf, login, request, sameOrigin, startWebTest, TOKEN, type WebTest } from './web-helpers.js';

const TOKEN_SHAPE = /wabot_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/;

describe('dashboard: API tokens (/config/api)', function () {
  this.timeout(60_000);
  let w: WebTest;
  let cookie: string;
  beforeEach(async () => {
    w = await startWebTest({ token: TOKEN });
    ({ cookie } = await login(w.port, TOKEN));
  });
  afterEach(() => w.stop());

  const page = () => request(w.port, { path: '/config/api', headers: { cookie } });
  const post = async (action: string, fields: Record<string, string>, csrf?: string) =>
    request(w.port, { method: 'POST', path: `/config/api/${action}`, headers: { cookie, ...sameOrigin(w.port) }, body: new URLSearchParams({ _csrf: csrf ?? csrfOf((await page()).body), ...fields }).toString() });
  const chats = (token: string) => request(w.port, { path: '/api/v1/chats', headers: { authorization: `Bearer ${token}` } });

  it('makes a token whose secret is shown once, lists it with its last use, and revokes it', async () => {
    expect((await page()).body).to.include('No API tokens yet.');
    const made = await post('create', { name: 'home-assistant', scopes: 'send:447700900123, chats' });
    expect(made.status).to.equal(200);
    const token = TOKEN_SHAPE.exec(made.body)?.[0];
    expect(token, 'the secret on the answer').to.be.a('string');
    expect(made.headers['cache-control']).to.equal('no-store');
    expect((await chats(token!)).status).to.equal(200);

    const listed = (await page()).body;
    expect(listed).to.include('home-assistant');
    expect(listed).to.include('send:447700900123@s.whatsapp.net');
    expect(listed, 'the secret is never shown again').to.not.match(TOKEN_SHAPE);
    const row = /<tr data-token-id="([0-9a-f]{12})">([\s\S]*?)<\/tr>/.exec(listed)!;
    expect(token).to.include(row[1]);
    // Used once above: the last-use cell holds a time, not "never".
    expect(row[2]).to.match(/<td><time[^>]*>[^<]+<\/time><\/td><td><form/);

    const revoked = await post('revoke', { id: row[1]! });
    expect(revoked.status).to.equal(303);
    expect((await chats(token!)).status).to.equal(401);
    expect((await page()).body).to.include('No API tokens yet.');
  });

  it('refuses a bad scope with the grammar and makes nothing', async () => {
    const refused = await post('create', { name: 'x', scopes: 'send:everyone' });
    expect(refused.status).to.equal(422);
    expect(refused.body).to.include('Not made: &quot;send:everyone&quot; names no chat');
    expect(refused.body).to.not.match(TOKEN_SHAPE);
    expect(w.t.app.automation.tokens.list()).to.deep.equal([]);
  });

  it('makes and revokes nothing without the session and its CSRF token', async () => {
    const forged = await post('create', { name: 'forged', scopes: 'chats' }, 'not-the-token');
    expect(forged.status).to.equal(403);
    const noSession = await request(w.port, { method: 'POST', path: '/config/api/create', headers: sameOrigin(w.port), body: new URLSearchParams({ name: 'anon', scopes: 'chats' }).toString() });
    expect(noSession.status).to.equal(401);
    expect(w.t.app.automation.tokens.list()).to.deep.equal([]);
    const { info } = w.t.app.automation.tokens.create('kept', [{ action: 'chats' }]);
    expect((await post('revoke', { id: info.id }, 'not-the-token')).status).to.equal(403);
    expect(w.t.app.automation.tokens.list().map((t) => t.name)).to.deep.equal(['kept']);
  });
});
