import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BufferJSON, getNextPreKeys, initAuthCreds } from '@whiskeysockets/baileys';
import { AuthStateCorruptError, useDurableAuthState } from '../../../core/adapters/whatsapp/auth-store.js';
import { BOT_ME } from '../../fakes/baileys-socket.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { runScript } from '../../helpers/run-script.js';
import { cleanup, link, setup } from './harness.js';

const half = (text: string) => text.slice(0, Math.floor(text.length / 2));

describe('WhatsApp credentials: the last good copy (creds.json.bak) on a real auth folder', () => {
  let dir: string;
  beforeEach(async () => {
    dir = path.join(await tempDir('wabot-creds-bak-'), 'session_auth');
  });
  afterEach(async () => {
    await rm(path.dirname(dir), { recursive: true, force: true });
  });

  /** A linked session whose connection opened once (so its good copy exists). */
  async function linkedSession() {
    const auth = await useDurableAuthState(dir);
    auth.state.creds.me = { id: BOT_ME.id, lid: BOT_ME.lid };
    await auth.saveCreds();
    await auth.keepGoodCopy();
    return auth;
  }

  it('is written only once the connection opened (saving creds alone writes none), as a whole copy', async () => {
    const auth = await useDurableAuthState(dir);
    await auth.saveCreds();
    expect(existsSync(path.join(dir, 'creds.json.bak'))).to.equal(false);
    auth.state.creds.me = { id: BOT_ME.id };
    await auth.keepGoodCopy();
    expect(await readFile(path.join(dir, 'creds.json.bak'), 'utf8')).to.equal(JSON.stringify(auth.state.creds, BufferJSON.replacer));
    expect((await readdir(dir)).filter((n) => n.includes('.tmp-'))).to.deep.equal([]);
  });

  it('a corrupt creds.json is replaced by the good copy: same device, the bad bytes kept aside, and it says so', async () => {
    const linked = await linkedSession();
    const file = path.join(dir, 'creds.json');
    const bad = half(await readFile(file, 'utf8'));
    await writeFile(file, bad);
    const auth = await useDurableAuthState(dir);
    expect(auth.restored).to.equal(true);
    expect(auth.state.creds.me?.id).to.equal(BOT_ME.id);
    expect(auth.state.creds.registrationId).to.equal(linked.state.creds.registrationId);
    expect(Buffer.from(auth.state.creds.noiseKey.private)).to.deep.equal(Buffer.from(linked.state.creds.noiseKey.private));
    expect(auth.recovery?.reason).to.match(/not valid JSON/);
    expect(await readFile(auth.recovery!.setAside!, 'utf8')).to.equal(bad);
    expect(await readFile(file, 'utf8')).to.equal(await readFile(path.join(dir, 'creds.json.bak'), 'utf8'));
    // The next start reads the restored file as it is: nothing more to restore.
    expect((await useDurableAuthState(dir)).recovery).to.equal(undefined);
  });

  it('a restored copy never makes pre-keys under ids already made and uploaded after it was taken', async () => {
    const linked = await linkedSession();
    // After the copy: Baileys makes and uploads 30 pre-keys (ids 1–30) and counts on in creds.json.
    const made = await getNextPreKeys(linked.state, 30);
    Object.assign(linked.state.creds, made.update);
    await linked.saveCreds();
    await linked.flush();
    expect(linked.state.creds.nextPreKeyId).to.equal(31);
    await writeFile(path.join(dir, 'creds.json'), half(await readFile(path.join(dir, 'creds.json'), 'utf8')));
    const auth = await useDurableAuthState(dir);
    expect(auth.restored).to.equal(true);
    expect(auth.state.creds).to.include({ nextPreKeyId: 31, firstUnuploadedPreKeyId: 31 });
    // The next upload makes new ids; the keys already on the server stay as they were.
    const next = await getNextPreKeys(auth.state, 5);
    expect(Object.keys(next.preKeys).map(Number)).to.deep.equal([31, 32, 33, 34, 35]);
    const kept = await auth.state.keys.get('pre-key', ['1', '30']);
    expect(Buffer.from(kept['1'].public)).to.deep.equal(Buffer.from(made.preKeys[1].public));
    expect(Buffer.from(kept['30'].public)).to.deep.equal(Buffer.from(made.preKeys[30].public));
  });

  it('credentials that parse but are not key material are restored the same way', async () => {
    await linkedSession();
    const creds: any = initAuthCreds();
    creds.noiseKey.private = 'not-a-key';
    await writeFile(path.join(dir, 'creds.json'), JSON.stringify(creds, BufferJSON.replacer));
    const auth = await useDurableAuthState(dir);
    expect(auth.recovery?.reason).to.match(/noiseKey\.private must be 32 bytes/);
    expect(auth.state.creds.me?.id).to.equal(BOT_ME.id);
  });

  it('a lost creds.json beside its good copy is restored too (never a silent new device)', async () => {
    await linkedSession();
    await rm(path.join(dir, 'creds.json'));
    const auth = await useDurableAuthState(dir);
    expect(auth.restored).to.equal(true);
    expect(auth.state.creds.me?.id).to.equal(BOT_ME.id);
    expect(auth.recovery).to.include({ reason: 'the file is missing', setAside: undefined });
  });

  it('without a good copy (none, or a corrupt one) a corrupt creds.json stops the start, says the fix, and nothing is touched', async () => {
    await linkedSession();
    const file = path.join(dir, 'creds.json');
    const bak = path.join(dir, 'creds.json.bak');
    await writeFile(file, '{"half":');
    await writeFile(bak, '');
    const before = (await readdir(dir)).sort();
    const error = await useDurableAuthState(dir).then(() => undefined, (e: Error) => e);
    expect(error).to.be.instanceOf(AuthStateCorruptError);
    expect(error!.message).to.include(file).and.include('no good copy').and.include('will not start').and.match(/delete the folder/);
    expect((await readdir(dir)).sort()).to.deep.equal(before);
    expect(await readFile(file, 'utf8')).to.equal('{"half":');
    await rm(bak);
    expect(await useDurableAuthState(dir).then(() => undefined, (e: Error) => e)).to.be.instanceOf(AuthStateCorruptError);
  });
});

describe('WhatsApp credentials: restored loudly by the transport (fake socket, real auth folder)', () => {
  afterEach(cleanup);

  it('keeps the good copy after the link opens; a corrupt creds.json at the next start reconnects as the same device, with an error line and an owner notice', async () => {
    const first = await setup();
    await link(first);
    await first.transport.stop();
    const folder = path.join(first.dir, 'data', 'session_auth');
    expect(existsSync(path.join(folder, 'creds.json.bak'))).to.equal(true);
    await writeFile(path.join(folder, 'creds.json'), '{"noiseKey": {"private": ');

    const second = await setup({ dir: first.dir });
    // Reconnecting with the stored device: no QR, the socket got the linked credentials.
    expect(second.sockets.last.options.auth.creds.me?.id).to.equal(BOT_ME.id);
    expect(second.transport.session().status).to.not.equal('qr');
    const raised = second.notices.filter((n) => n.key === 'whatsapp-creds-restored');
    expect(raised.map((n) => n.kind)).to.deep.equal(['raise']);
    expect(raised[0]!.text).to.include('creds.json.bak').and.include('no new QR');
    expect(second.logs().some((l) => l.level >= 50 && String(l.msg).includes('restored the last good copy'))).to.equal(true);
    second.sockets.last.open(BOT_ME);
    expect(second.notices.filter((n) => n.key === 'whatsapp-creds-restored').map((n) => n.kind)).to.deep.equal(['raise', 'recover']);
  });

  it('npm start with a corrupt creds.json and no good copy: a clear "Cannot start" naming the fix, exit 1, no new QR', async function () {
    // A whole `npm start` (every plugin, the web server) before it stops: seconds on a quiet machine, but over the
    // suite's 20 s on a loaded one. The limits are only safety nets.
    this.timeout(120_000);
    const dir = await tempDir('wabot-creds-start-');
    try {
      await writeConfig(dir, { port: 0 });
      const folder = path.join(dir, 'data', 'session_auth');
      await mkdir(folder, { recursive: true });
      await writeFile(path.join(folder, 'creds.json'), '{"half":');
      // Loopback only: the start must stop before any connection, but nothing may leave the machine if it did not.
      const result = await runScript('start', [], { cwd: dir, env: { API_KEY: 'k-1', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm', AUDIO_API_KEYS: '', LOG_FORMAT: 'json', WA_WEBSOCKET_URL: 'ws://127.0.0.1:9/ws' }, timeoutMs: 100_000 });
      expect(result.code).to.equal(1);
      const line = result.stderr.split('\n').find((l) => l.startsWith('Cannot start'));
      expect(line).to.include('creds.json').and.include('no good copy').and.include('npm run restore');
      expect(await readFile(path.join(folder, 'creds.json'), 'utf8')).to.equal('{"half":');
      // No log line about a new link (a QR or pairing code): it stopped before connecting.
      expect(result.stderr.split('\n').filter((l) => l.startsWith('{') && /QR|pairing code/i.test(l))).to.deep.equal([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
