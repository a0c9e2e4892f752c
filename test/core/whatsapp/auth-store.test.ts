import { expect } from 'chai';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BufferJSON, useMultiFileAuthState } from '@whiskeysockets/baileys';
import { AuthStateCorruptError, keyFileName, useDurableAuthState } from '../../../core/adapters/whatsapp/auth-store.js';
import { tempDir } from '../../helpers/checkout.js';

describe('WhatsApp auth-state store (data/session_auth)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = path.join(await tempDir('wabot-auth-'), 'session_auth');
  });
  afterEach(async () => {
    await rm(path.dirname(dir), { recursive: true, force: true });
  });

  it('round-trips creds and every v7 key type (lid-mapping, device-list, tctoken) with binary values', async () => {
    const first = await useDurableAuthState(dir);
    expect(first.restored).to.equal(false);
    first.state.creds.me = { id: '6289900000001:12@s.whatsapp.net', lid: '155500000000001:12@lid' };
    await first.saveCreds();
    await first.state.keys.set({
      'lid-mapping': { '6289900000001': '155500000000001', '155500000000001_reverse': '6289900000001' },
      'device-list': { '6289900000001': ['0', '12'] },
      tctoken: { '6281200000001@s.whatsapp.net': { token: Buffer.from([1, 2, 3]), timestamp: '1700000000' } },
      session: { '155500000000001.12': Buffer.from('signal-session') },
    });
    const again = await useDurableAuthState(dir);
    expect(again.restored).to.equal(true);
    expect(again.state.creds.me?.lid).to.equal('155500000000001:12@lid');
    expect(Buffer.isBuffer(again.state.creds.noiseKey.private) || again.state.creds.noiseKey.private instanceof Uint8Array).to.equal(true);
    expect(await again.state.keys.get('lid-mapping', ['6289900000001'])).to.deep.equal({ '6289900000001': '155500000000001' });
    expect(await again.state.keys.get('device-list', ['6289900000001'])).to.deep.equal({ '6289900000001': ['0', '12'] });
    const token = await again.state.keys.get('tctoken', ['6281200000001@s.whatsapp.net']);
    expect(Buffer.from(token['6281200000001@s.whatsapp.net'].token)).to.deep.equal(Buffer.from([1, 2, 3]));
    // Deleting a key (value null) removes its file.
    await again.state.keys.set({ 'device-list': { '6289900000001': null } });
    expect(await again.state.keys.get('device-list', ['6289900000001'])).to.deep.equal({});
  });

  it('uses the file layout of useMultiFileAuthState, so existing sessions keep working in both directions', async () => {
    const baileys = await useMultiFileAuthState(dir);
    await baileys.saveCreds();
    await baileys.state.keys.set({ session: { '123.0': Buffer.from('abc') }, 'sender-key': { 'group@g.us::456::0': Buffer.from('sk') } });
    const names = await readdir(dir);
    expect(names).to.include.members(['creds.json', keyFileName('session', '123.0'), keyFileName('sender-key', 'group@g.us::456::0')]);
    const ours = await useDurableAuthState(dir);
    expect(ours.restored).to.equal(true);
    expect(ours.state.creds.registrationId).to.equal(baileys.state.creds.registrationId);
    const session = await ours.state.keys.get('session', ['123.0']);
    expect(Buffer.from(session['123.0'])).to.deep.equal(Buffer.from('abc'));
  });

  it('a crash between writing and renaming leaves the previous creds.json intact and no stray file', async () => {
    const store = await useDurableAuthState(dir);
    store.state.creds.me = { id: '111@s.whatsapp.net' };
    await store.saveCreds();
    const before = await readFile(path.join(dir, 'creds.json'), 'utf8');

    const crashing = await useDurableAuthState(dir, {
      write: {
        beforeRename: async (temp) => {
          // The new bytes are fully in the temporary file at this point; the "process dies" before the rename.
          expect(JSON.parse(await readFile(temp, 'utf8'), BufferJSON.reviver).me.id).to.equal('222@s.whatsapp.net');
          throw new Error('simulated crash');
        },
      },
    });
    crashing.state.creds.me = { id: '222@s.whatsapp.net' };
    let error: Error | undefined;
    await crashing.saveCreds().catch((err) => (error = err));
    expect(error?.message).to.equal('simulated crash');
    expect(await readFile(path.join(dir, 'creds.json'), 'utf8')).to.equal(before);
    expect((await readdir(dir)).filter((n) => n.includes('.tmp-'))).to.deep.equal([]);
    const reopened = await useDurableAuthState(dir);
    expect(reopened.state.creds.me?.id).to.equal('111@s.whatsapp.net');
  });

  it('removes temporary files a killed process left behind, without touching the real files', async () => {
    const store = await useDurableAuthState(dir);
    await store.saveCreds();
    await writeFile(path.join(dir, 'creds.json.tmp-999-1'), '{"half":');
    await useDurableAuthState(dir);
    expect(await readdir(dir)).to.deep.equal(['creds.json']);
  });

  it('refuses to start on a corrupt or empty creds.json, naming the file, instead of pairing as a new device', async () => {
    const store = await useDurableAuthState(dir);
    await store.saveCreds();
    const file = path.join(dir, 'creds.json');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.slice(0, Math.floor(text.length / 2)));
    let error: unknown;
    await useDurableAuthState(dir).catch((err) => (error = err));
    expect(error).to.be.instanceOf(AuthStateCorruptError);
    expect((error as Error).message).to.include(file).and.to.include('will not start');
    // The corrupt file is left for the owner to restore: nothing was overwritten.
    expect(await readFile(file, 'utf8')).to.equal(text.slice(0, Math.floor(text.length / 2)));

    await writeFile(file, '');
    error = undefined;
    await useDurableAuthState(dir).catch((err) => (error = err));
    expect((error as Error).message).to.include(file).and.to.include('empty');
  });

  it('serialises writes per key: the last write of a burst wins, every file is whole', async () => {
    const store = await useDurableAuthState(dir);
    const writes = Array.from({ length: 25 }, (_, i) => store.state.keys.set({ 'device-list': { me: [String(i)] } }));
    await Promise.all(writes);
    expect(await store.state.keys.get('device-list', ['me'])).to.deep.equal({ me: ['24'] });
    const again = await useDurableAuthState(dir);
    expect(await again.state.keys.get('device-list', ['me'])).to.deep.equal({ me: ['24'] });
  });

  it('clear() deletes the whole session after pending writes finished', async () => {
    const store = await useDurableAuthState(dir);
    await store.saveCreds();
    void store.state.keys.set({ session: { a: Buffer.from('x') } });
    await store.clear();
    expect(await readdir(dir)).to.deep.equal([]);
    expect((await useDurableAuthState(dir)).restored).to.equal(false);
  });
});
