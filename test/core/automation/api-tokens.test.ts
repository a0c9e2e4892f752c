import { expect } from 'chai';
import { ApiError } from '../../../core/api/errors.js';
import { redact } from '../../../core/services/log/logger.js';
import { ApiTokens } from '../../../core/services/automation/api-tokens.js';
import { allows, chatOf, formatScope, parseScopes } from '../../../core/services/automation/scopes.js';
import { closeDatabase } from '../../../core/services/store/database.js';
import { storeDatabaseText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const MUM = '447700900123@s.whatsapp.net';
const FAMILY = '120363000000000001@g.us';

/** The code an ApiError thrown by `act` carries (fails when nothing is thrown). */
function codeOf(act: () => unknown): string {
  try {
    act();
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    return (err as ApiError).code;
  }
  throw new Error('expected an ApiError');
}

describe('API token scopes (send:<chat>, read:<chat>, prompt:<chat>, chats)', () => {
  it('reads numbers and chat ids, each chat as an id', () => {
    expect(parseScopes('send:+44 7700 900123, read:120363000000000001@g.us,chats,prompt:5551234@lid').map(formatScope)).to.deep.equal([`send:${MUM}`, `read:${FAMILY}`, 'chats', 'prompt:5551234@lid']);
    expect(chatOf('447700900123')).to.equal(MUM);
  });

  it('refuses what is not a scope with API_BAD_SCOPE, naming it', () => {
    for (const bad of ['write:447700900123', 'send:', 'send', 'send:mum', 'send:*', 'send:1@example.com', '']) {
      expect(codeOf(() => parseScopes(bad)), bad).to.equal('API_BAD_SCOPE');
    }
    expect(() => parseScopes('chats,delete:447700900123')).to.throw(/"delete:447700900123" is not a scope/);
  });

  it('lets a scope cover its action in its chat only, a number whatever way its id is written', () => {
    const scopes = parseScopes(`send:447700900123,read:${FAMILY}`);
    expect(allows(scopes, 'send', MUM)).to.equal(true);
    expect(allows(scopes, 'send', '447700900123:12@s.whatsapp.net')).to.equal(true);
    expect(allows(scopes, 'send', '447700900124@s.whatsapp.net')).to.equal(false);
    expect(allows(scopes, 'read', MUM)).to.equal(false);
    expect(allows(scopes, 'send', FAMILY)).to.equal(false);
    expect(allows(scopes, 'read', FAMILY)).to.equal(true);
    expect(allows(scopes, 'read', '120363000000000002@g.us')).to.equal(false);
    expect(allows(scopes, 'chats')).to.equal(false);
    expect(allows(parseScopes('chats'), 'chats')).to.equal(true);
  });
});

describe('API tokens (stored hashed in the store database)', () => {
  const folder = storeFolderPerTest();
  let now: number;
  let tokens: ApiTokens;
  beforeEach(() => {
    now = Date.UTC(2026, 10, 29, 7, 0);
    tokens = new ApiTokens(folder.dir, () => now);
  });

  it('accepts a new token for its scopes and refuses it outside them (403)', () => {
    const { token, info } = tokens.create('home-assistant', parseScopes('send:447700900123'));
    expect(token).to.match(/^wabot_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(token).to.include(info.id);
    expect(tokens.authorise(`Bearer ${token}`, 'send', MUM).name).to.equal('home-assistant');
    expect(codeOf(() => tokens.authorise(`Bearer ${token}`, 'send', '447700900999@s.whatsapp.net'))).to.equal('API_SCOPE_REFUSED');
    expect(codeOf(() => tokens.authorise(`Bearer ${token}`, 'read', MUM))).to.equal('API_SCOPE_REFUSED');
  });

  it('makes every token different (random secrets)', () => {
    const a = tokens.create('a', parseScopes('chats')).token;
    const b = tokens.create('b', parseScopes('chats')).token;
    expect(a).to.not.equal(b);
    expect(a.slice(19)).to.not.equal(b.slice(19));
  });

  it('refuses a missing, unknown, altered or revoked token (401)', () => {
    const { token } = tokens.create('script', parseScopes('chats'));
    expect(codeOf(() => tokens.authorise(undefined, 'chats'))).to.equal('API_TOKEN_MISSING');
    expect(codeOf(() => tokens.authorise('Bearer ', 'chats'))).to.equal('API_TOKEN_MISSING');
    // Same id, another secret: the hash decides, not the id.
    const altered = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    expect(codeOf(() => tokens.authorise(`Bearer ${altered}`, 'chats'))).to.equal('API_TOKEN_INVALID');
    expect(codeOf(() => tokens.authorise(`Bearer wabot_000000000000_${'A'.repeat(43)}`, 'chats'))).to.equal('API_TOKEN_INVALID');
    expect(codeOf(() => tokens.authorise('Bearer hunter2', 'chats'))).to.equal('API_TOKEN_INVALID');
    expect(tokens.authorise(`Bearer ${token}`, 'chats').name).to.equal('script');
    expect(tokens.revoke('script')?.name).to.equal('script');
    expect(codeOf(() => tokens.authorise(`Bearer ${token}`, 'chats'))).to.equal('API_TOKEN_INVALID');
    expect(tokens.revoke('script')).to.equal(undefined);
  });

  it('revokes by id as well as by name, and only that token', () => {
    const one = tokens.create('one', parseScopes('chats'));
    const two = tokens.create('two', parseScopes('chats'));
    tokens.revoke(one.info.id);
    expect(tokens.verify(one.token)).to.equal(undefined);
    expect(tokens.verify(two.token)?.name).to.equal('two');
  });

  it('lists name, scopes, creation and last use, never the secret; a new token or process sees the same', () => {
    const { token } = tokens.create('ha', parseScopes(`send:447700900123,read:${FAMILY}`));
    now += 60_000;
    tokens.create('never-used', parseScopes('chats'));
    expect(tokens.list().map((t) => [t.name, t.lastUsed])).to.deep.equal([
      ['ha', undefined],
      ['never-used', undefined],
    ]);
    now += 60_000;
    tokens.verify(token);
    const [ha] = new ApiTokens(folder.dir).list();
    expect(ha).to.deep.include({ name: 'ha', created: Date.UTC(2026, 10, 29, 7, 0), lastUsed: Date.UTC(2026, 10, 29, 7, 2) });
    expect(ha!.scopes.map(formatScope)).to.deep.equal([`send:${MUM}`, `read:${FAMILY}`]);
    expect(JSON.stringify(tokens.list())).to.not.include(token.slice(19));
  });

  it('refuses a taken name, a bad name and no scopes', () => {
    tokens.create('ha', parseScopes('chats'));
    expect(codeOf(() => tokens.create('ha', parseScopes('chats')))).to.equal('API_BAD_REQUEST');
    expect(codeOf(() => tokens.create('no/slashes', parseScopes('chats')))).to.equal('API_BAD_REQUEST');
    expect(codeOf(() => tokens.create('empty', []))).to.equal('API_BAD_SCOPE');
    expect(tokens.list().map((t) => t.name)).to.deep.equal(['ha']);
  });

  it('keeps only a hash: the secret is nowhere in store.db or its WAL', async () => {
    const { token } = tokens.create('ha', parseScopes('chats'));
    tokens.verify(token);
    const secret = token.slice('wabot_'.length + 13);
    const text = await storeDatabaseText(folder.dir);
    expect(text).to.include('ha');
    expect(text).to.not.include(secret);
    expect(text).to.not.include(secret.slice(0, 16));
    closeDatabase(folder.dir);
    expect(await storeDatabaseText(folder.dir)).to.not.include(secret.slice(0, 16));
  });

  it('a token in any log line is redacted by its shape', () => {
    const { token } = tokens.create('ha', parseScopes('chats'));
    expect(redact(`{"msg":"got Authorization: Bearer ${token} from curl"}`, [])).to.equal('{"msg":"got Authorization: Bearer [redacted] from curl"}');
  });
});
