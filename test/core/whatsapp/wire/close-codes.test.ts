import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BufferJSON } from '@whiskeysockets/baileys';
import type { BotConfig } from '../../../../core/services/config/schema.js';
import { loadSettings } from '../../../../core/services/config/settings.js';
import { createLogger } from '../../../../core/services/log/logger.js';
import { WhatsAppTransport } from '../../../../core/adapters/whatsapp/whatsapp-transport.js';
import { whatsAppSettings } from '../../../../app/whatsapp-settings.js';
import { WhatsAppWireServer } from '../../../fakes/whatsapp-wire-server.js';
import { tempDir } from '../../../helpers/checkout.js';
import { watchLog, type LogWatch } from '../../../helpers/wire-transport.js';

interface Linked {
  transport: WhatsAppTransport;
  server: WhatsAppWireServer;
  dir: string;
  qrs: string[];
  versionLookups: () => number;
  messages: () => string[];
  until: LogWatch['until'];
}

const running: Linked[] = [];

/**
 * The real transport (Baileys' own socket, the durable auth store in DATA_DIR) against a wire server of its own, not
 * yet linked (`session`: none) or started from a copy of a linked session. Ordinary backoff is shortened (unless a test
 * needs it long) so that a close the policy retries comes back within the test, while 440's long backoff keeps its
 * default.
 */
async function startTransport(options: { backoff?: { baseMs: number; maxMs: number }; session?: { folder: string; server: WhatsAppWireServer } } = {}): Promise<Linked> {
  const dir = await tempDir('wabot-wire-close-');
  if (options.session) await cp(options.session.folder, path.join(dir, 'data', 'session_auth'), { recursive: true });
  const server = await WhatsAppWireServer.start();
  if (options.session) server.holdPreKeysOf(options.session.server);
  const settings = loadSettings({ cwd: dir, env: { PATH: process.env.PATH ?? '', API_KEY: 'k-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm', WA_WEBSOCKET_URL: server.url } });
  const log = watchLog();
  const qrs: string[] = [];
  let lookups = 0;
  const transport = new WhatsAppTransport({
    ...whatsAppSettings(settings, () => ({ host: '127.0.0.1', port: 0, targetUserIds: [] }) as unknown as BotConfig),
    log: createLogger({ level: 'info', pretty: false, destination: log.sink }),
    printQr: (qr) => void (qrs.push(qr), log.poke()),
    random: () => 0.5,
    backoff: { ...(options.backoff ?? { baseMs: 50, maxMs: 100 }), stableMs: 600_000 },
    fetchVersion: async () => {
      lookups++;
      return { version: [2, 3000, 1234567], isLatest: true };
    },
  });
  const linked = { transport, server, dir, qrs, versionLookups: () => lookups, messages: () => log.lines.map((l) => String(l.msg)), until: log.until };
  running.push(linked);
  await transport.start(async () => undefined);
  return linked;
}

/** A transport linked the way a phone links it: QR → scan → 515 restart → login → open. */
async function linkByQr(): Promise<Linked> {
  const l = await startTransport();
  expect((await l.server.waitForConnections(1)).kind).to.equal('registration');
  await l.until(() => l.qrs.length === 1, 'the QR');
  l.server.scan(l.qrs[0]);
  expect((await l.server.waitForConnections(2)).kind).to.equal('login');
  await l.until(() => l.transport.session().status === 'linked', 'the link to open');
  return l;
}

/**
 * A transport started from a copy of the session one QR link stored (made once in before()): it logs in on its first
 * connection, as after a restart, without paying for a link of its own.
 */
async function linkedTransport(session: { folder: string; server: WhatsAppWireServer }, backoff?: { baseMs: number; maxMs: number }): Promise<Linked> {
  const l = await startTransport({ session, backoff });
  expect(await l.server.waitForConnections(1)).to.deep.include({ kind: 'login', user: l.server.user });
  await l.until(() => l.transport.session().status === 'linked', 'the link to open');
  expect(l.qrs).to.deep.equal([]);
  return l;
}

const credsOf = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'data', 'session_auth', 'creds.json'), 'utf8'), BufferJSON.reviver) as { me?: { id?: string } };

describe('WhatsApp close codes on a real socket (the reconnect policy\'s decisions)', function () {
  this.timeout(60_000);
  /** What the one QR link of the file showed and stored (made in before(), read by the link test). */
  let link: { qr: string; loginUser: string; serverUser: string; serverLid: string; me: unknown; storedMe: string | undefined };
  /**
   * A copy of the session that link stored, for the tests that start linked (each on a copy of its own), and the server
   * that holds the pre-keys it uploaded.
   */
  let session: { folder: string; server: WhatsAppWireServer };

  before(async () => {
    const l = await linkByQr();
    link = { qr: l.qrs[0]!, loginUser: l.server.connections[1]!.user!, serverUser: l.server.user, serverLid: l.server.lidUser, me: l.transport.session().me, storedMe: undefined };
    running.splice(running.indexOf(l), 1);
    await l.transport.stop();
    await l.server.stop();
    link.storedMe = credsOf(l.dir).me?.id;
    session = { folder: path.join(await mkdtemp(path.join(os.tmpdir(), 'wabot-wire-session-')), 'session_auth'), server: l.server };
    await cp(path.join(l.dir, 'data', 'session_auth'), session.folder, { recursive: true });
    await rm(l.dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    for (const l of running.splice(0)) {
      await l.transport.stop();
      await l.server.stop();
      // Each holds a session of ~820 files (812 pre-keys): removed here, beside the other files' tests, rather than
      // alone in the run's clean-up at the end.
      await rm(l.dir, { recursive: true, force: true });
    }
  });
  after(async () => {
    if (session) await rm(path.dirname(session.folder), { recursive: true, force: true });
  });

  it('links by QR on the wire: pair-device → QR → scan → 515 → login with the new session, stored on disk', () => {
    expect(link.qr).to.match(/^https:\/\/wa\.me\/settings\/linked_devices#ref-1,/);
    expect(link.loginUser).to.equal(link.serverUser);
    expect(link.me).to.deep.include({ id: `${link.serverUser}@s.whatsapp.net`, lid: `${link.serverLid}@lid` });
    expect(link.storedMe).to.equal(`${link.serverUser}:7@s.whatsapp.net`);
  });

  it('515 restart required: reconnects at once with the same session (no QR)', async () => {
    // An ordinary close would wait a minute here: only "restart now" comes back within the test.
    const l = await linkedTransport(session, { baseMs: 60_000, maxMs: 120_000 });
    l.server.end(515);
    expect(await l.server.waitForConnections(2)).to.deep.include({ kind: 'login', user: l.server.user });
    await l.until(() => l.transport.session().status === 'linked', 'the link to open again');
    expect(l.qrs).to.have.length(0);
  });

  it('401 logged out: clears the stored session and shows a new QR', async () => {
    const l = await linkedTransport(session);
    expect(credsOf(l.dir).me?.id).to.equal(`${l.server.user}:7@s.whatsapp.net`);
    l.server.end(401);
    expect((await l.server.waitForConnections(2)).kind).to.equal('registration');
    await l.until(() => l.qrs.length === 1, 'a new QR');
    expect(l.transport.session().status).to.equal('qr');
    expect(existsSync(path.join(l.dir, 'data', 'session_auth', 'creds.json')) ? credsOf(l.dir).me : undefined).to.equal(undefined);
    expect(l.messages().some((m) => m.includes('WhatsApp logged this device out'))).to.equal(true);
  });

  it('405 client too old: looks the Web version up again and reconnects announcing it', async () => {
    const l = await linkedTransport(session);
    const lookups = l.versionLookups();
    expect(l.server.connections[0].version).to.not.equal('2.3000.1234567');
    l.server.end(405);
    const next = await l.server.waitForConnections(2);
    expect(next).to.deep.include({ kind: 'login', version: '2.3000.1234567' });
    expect(l.versionLookups()).to.equal(lookups + 1);
    await l.until(() => l.transport.session().status === 'linked', 'the link to open again');
    expect(l.transport.session().problem).to.equal(undefined);
  });

  it('440 replaced: does not fight the other instance; the next attempt waits the long backoff', async () => {
    const l = await linkedTransport(session);
    const closedAt = Date.now();
    l.server.end(440);
    await l.until(() => l.transport.session().status === 'offline' && l.transport.session().retryAt !== undefined, 'the close');
    // 60 s base with the jitter fixed at its middle: 45 s; an ordinary close would retry after 50–100 ms.
    expect(l.transport.session().retryAt! - closedAt).to.be.greaterThan(30_000);
    expect(l.transport.session().lastError).to.include('connection replaced (440)');
    expect(l.messages().some((m) => m.includes('another instance is using this WhatsApp session'))).to.equal(true);
    expect(l.server.connections).to.have.length(1);
  });
});
