import { expect } from 'chai';
import { runTokenCommand } from '../../cli/token-command.js';
import { ApiTokens } from '../../core/services/automation/api-tokens.js';
import { runScript } from '../helpers/run-script.js';
import { storeFolderPerTest } from '../helpers/store-folder.js';

describe('npm run token -- create|list|revoke', function () {
  // A spawned npm script: seconds on a quiet machine, but more than the suite's 20 s on a
  // loaded one. The limit is only a safety net.
  this.timeout(120_000);
  const folder = storeFolderPerTest();
  let out: string;
  let err: string;
  const run = (...args: string[]) => {
    out = '';
    err = '';
    return runTokenCommand(args, { dataDir: folder.dir, out: (t) => void (out += t), err: (t) => void (err += t) });
  };

  it('creates a token, shows its secret once, lists it without the secret and revokes it', () => {
    expect(run('create', '--name', 'home-assistant', '--scope', 'send:447700900123,chats')).to.equal(0);
    const token = /wabot_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/.exec(out)?.[0];
    expect(token, out).to.be.a('string');
    expect(out).to.include('send:447700900123@s.whatsapp.net, chats');
    expect(new ApiTokens(folder.dir).verify(token)?.name).to.equal('home-assistant');

    expect(run('list')).to.equal(0);
    expect(out).to.match(/^[0-9a-f]{12} {2}home-assistant {2}created \d{4}-\d\d-\d\d \d\d:\d\d UTC {2}last used \d{4}-\d\d-\d\d \d\d:\d\d UTC {2}send:447700900123@s\.whatsapp\.net,chats\n$/);
    expect(out).to.not.include(token!.slice(19));

    expect(run('revoke', 'home-assistant')).to.equal(0);
    expect(out).to.include('Revoked "home-assistant"');
    expect(new ApiTokens(folder.dir).verify(token)).to.equal(undefined);
    expect(run('list')).to.equal(0);
    expect(out).to.include('No API tokens');
  });

  it('refuses a bad scope with exit code 2 and says the grammar, making nothing', () => {
    expect(run('create', '--name', 'x', '--scope', 'send:mum')).to.equal(2);
    expect(err).to.include('API_BAD_SCOPE: "send:mum" names no chat');
    expect(err).to.include('send:<chat>, read:<chat>, prompt:<chat> and chats');
    expect(run('create', '--name', 'x')).to.equal(2);
    expect(err).to.include('API_BAD_SCOPE');
    expect(run('create', '--scope', 'chats')).to.equal(2);
    expect(err).to.include('--name');
    expect(run('frobnicate')).to.equal(2);
    expect(run('create', '--bogus')).to.equal(2);
    expect(new ApiTokens(folder.dir).list()).to.deep.equal([]);
  });

  it('says so, with exit code 1, when there is nothing to revoke', () => {
    expect(run('revoke', 'nobody')).to.equal(1);
    expect(err).to.include('No token is named or numbered "nobody"');
  });

  it('runs as the npm script, on DATA_DIR', async () => {
    const created = await runScript('token', ['create', '--name', 'cli', '--scope', 'read:120363000000000001@g.us'], { cwd: folder.dir, env: { DATA_DIR: folder.dir } });
    expect(created.code, created.stderr).to.equal(0);
    const token = /wabot_\S+/.exec(created.stdout)![0];
    expect(new ApiTokens(folder.dir).verify(token)?.name).to.equal('cli');
    const bad = await runScript('token', ['create', '--name', 'x', '--scope', 'nope'], { cwd: folder.dir, env: { DATA_DIR: folder.dir } });
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.include('API_BAD_SCOPE');
  });
});
