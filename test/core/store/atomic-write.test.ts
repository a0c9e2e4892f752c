import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BufferJSON, initAuthCreds } from '@whiskeysockets/baileys';
import { checkDocument, HISTORY_SCHEMA } from '../../../core/services/store/schemas.js';
import { AuthStateCorruptError, useDurableAuthState } from '../../../core/adapters/whatsapp/auth-store.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { ROOT, tempDir } from '../../helpers/checkout.js';

const dist = (rel: string) => JSON.stringify(path.join(ROOT, 'dist', rel));

/** Writes big documents alternating between two markers as fast as it can, through the real stores. */
const WRITER = `
const [mode, target] = process.argv.slice(2);
const marker = (i) => (i % 2 ? 'a' : 'b');
// One byte per whole write: the test kills the writer while it is in the middle of a later one.
const announce = () => process.stdout.write('.');
if (mode === 'json') {
  // A chat history file as earlier versions wrote it, through the one atomic writer left (config.json's).
  const { writeFileAtomicSafe } = await import(${dist('core/services/store/atomic.js')});
  const { fileVersionKey, HISTORY_SCHEMA } = await import(${dist('core/services/store/schemas.js')});
  for (let i = 0; ; i++) {
    const doc = { messages: Array.from({ length: 1500 }, (_, n) => ({ role: 'user', text: marker(i).repeat(40), at: n })) };
    await writeFileAtomicSafe(target, JSON.stringify({ [fileVersionKey(HISTORY_SCHEMA, doc)]: HISTORY_SCHEMA.version, ...doc }, null, 2));
    announce();
  }
} else {
  const { useDurableAuthState } = await import(${dist('core/adapters/whatsapp/auth-store.js')});
  const auth = await useDurableAuthState(target);
  for (let i = 0; ; i++) {
    auth.state.creds.processedHistoryMessages = Array.from({ length: 1500 }, (_, n) => ({ key: { id: marker(i).repeat(30) }, messageTimestamp: n }));
    await auth.saveCreds();
    announce();
  }
}
`;

/** Starts the writer and kills it (SIGKILL) once `writes` whole writes are done, while it writes the next one. */
async function killMidWrite(script: string, mode: string, target: string, writes: number): Promise<void> {
  const child = spawn(process.execPath, [script, mode, target], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let done = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      done += chunk.length;
      if (done >= writes) resolve();
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`writer exited early (${code})`)));
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.once('close', r));
}

/** All markers in a list of texts are one and the same: the file is one whole version, never a mix. */
function oneMarker(texts: string[]): string {
  const markers = new Set(texts.map((t) => t[0]));
  expect(markers.size, 'a mix of two versions').to.equal(1);
  expect(texts.every((t) => new Set(t).size === 1)).to.equal(true);
  return [...markers][0];
}

describe('atomic writes under kill -9', function () {
  this.timeout(60000);
  let dir: string;
  let script: string;
  before(async () => {
    dir = await tempDir();
    script = path.join(dir, 'writer.mjs');
    await writeFile(script, WRITER);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('a JSON store killed while writing leaves the old or the new file, and the next start removes the temp file', async () => {
    const data = path.join(dir, 'app', 'data');
    const file = path.join(data, 'history', '10000000001@s.whatsapp.net.json');
    for (let round = 0; round < 4; round++) {
      await killMidWrite(script, 'json', file, 1 + round * 3);
      const parsed = JSON.parse(await readFile(file, 'utf8'));
      const checked = checkDocument(HISTORY_SCHEMA, parsed);
      expect(checked.ok).to.equal(true);
      oneMarker(parsed.messages.map((m: { text: string }) => m.text));
      expect(parsed.messages).to.have.length(1500);
    }
    // A restart over the folder: the chat keeps its history and no temporary file stays behind.
    const t = await startTestBot('bundled', { dir: path.join(dir, 'app'), config: {} });
    try {
      const { readdir } = await import('node:fs/promises');
      expect((await readdir(path.dirname(file))).filter((n) => n.includes('.tmp-'))).to.deep.equal([]);
      expect(await t.app.bot.histories.recent('10000000001@s.whatsapp.net', 5000)).to.have.length(1500);
    } finally {
      await t.app.stop();
    }
  });

  it('the auth store killed while writing creds.json leaves whole credentials', async () => {
    const folder = path.join(dir, 'session_auth');
    // Two rounds: each writer loads Baileys (~2 s).
    for (let round = 0; round < 2; round++) {
      await killMidWrite(script, 'auth', folder, 1 + round * 3);
      const auth = await useDurableAuthState(folder);
      expect(auth.restored).to.equal(true);
      oneMarker((auth.state.creds.processedHistoryMessages as Array<{ key: { id: string } }>).map((m) => m.key.id));
    }
  });
});

describe('credentials are checked for what Baileys needs', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const cases: Array<[string, (c: any) => void, RegExp]> = [
    ['a private key as a string', (c) => (c.noiseKey.private = 'not-a-key'), /noiseKey\.private must be 32 bytes/],
    ['a public key of 31 bytes', (c) => (c.signedIdentityKey.public = c.signedIdentityKey.public.subarray(1)), /signedIdentityKey\.public must be 32 bytes.*31 bytes/],
    ['a short pre-key signature', (c) => (c.signedPreKey.signature = Buffer.alloc(10)), /signedPreKey\.signature must be 64 bytes/],
    ['a registration id as text', (c) => (c.registrationId = '1234'), /registrationId must be a whole number.*a string/],
    ['an advSecretKey that is a number', (c) => (c.advSecretKey = 5), /advSecretKey must be 32 bytes/],
    ['a missing pairing key pair', (c) => delete c.pairingEphemeralKeyPair, /pairingEphemeralKeyPair must be a key pair/],
  ];
  for (const [what, spoil, message] of cases) {
    it(`refuses ${what}, naming the file and what to do, and leaves it untouched`, async () => {
      const creds: any = initAuthCreds();
      spoil(creds);
      const file = path.join(dir, 'creds.json');
      const text = JSON.stringify(creds, BufferJSON.replacer);
      await writeFile(file, text);
      const error = await useDurableAuthState(dir).then(() => undefined, (e: Error) => e);
      expect(error).to.be.instanceOf(AuthStateCorruptError);
      expect(error!.message).to.match(message).and.include(file).and.match(/Restore creds\.json from a backup, or delete the folder/);
      expect(await readFile(file, 'utf8')).to.equal(text);
    });
  }

  it('accepts real credentials (fresh and after BufferJSON round trip)', async () => {
    await writeFile(path.join(dir, 'creds.json'), JSON.stringify(initAuthCreds(), BufferJSON.replacer));
    const auth = await useDurableAuthState(dir);
    expect(auth.restored).to.equal(true);
  });
});
