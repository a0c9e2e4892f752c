import { PassThrough } from 'node:stream';
import { rm } from 'node:fs/promises';
import sinon from 'sinon';
import { fetchLatestWaWebVersion } from '@whiskeysockets/baileys';
import type { BotConfig } from '../../../core/services/config/schema.js';
import { loadSettings } from '../../../core/services/config/settings.js';
import { createLogger } from '../../../core/services/log/logger.js';
import type { OwnerNotifier } from '../../../core/services/notices/owner-notifier.js';
import type { IncomingMessage } from '../../../core/kernel/port/message.js';
import type { TransportEvents } from '../../../core/kernel/port/transport.js';
import { WhatsAppTransport, type WhatsAppTransportOptions } from '../../../core/adapters/whatsapp/whatsapp-transport.js';
import { whatsAppSettings } from '../../../app/whatsapp-settings.js';
import { BOT_ME, DisconnectReason, FakeSocketFactory } from '../../fakes/baileys-socket.js';
import { tempDir } from '../../helpers/checkout.js';

export interface Harness {
  dir: string;
  transport: WhatsAppTransport;
  sockets: FakeSocketFactory;
  received: IncomingMessage[];
  printed: string[];
  notices: Array<{ kind: 'raise' | 'recover'; key: string; text: string; linkDown?: boolean }>;
  logs: () => Array<Record<string, any>>;
  messages: () => string[];
  /** Resolves once `check` holds, checked now and after each log line and owner notice (never on a timer). */
  until(check: () => boolean): Promise<void>;
}

export const harnesses: Harness[] = [];

/** WhatsApp Web's service worker as Baileys' `fetchLatestWaWebVersion` reads it (the real helper runs on a stubbed fetch). */
export function swJs(revision: number): Response {
  return new Response(`self.x = {"client_revision":${revision},"other":1};`, { status: 200 });
}

/** Stubs the global fetch (only web.whatsapp.com/sw.js is asked for) unless a test stubbed it already. */
export function stubWebVersion(revision = 1000000001): void {
  if (!(globalThis.fetch as { isSinonProxy?: boolean }).isSinonProxy) sinon.stub(globalThis, 'fetch').callsFake(async () => swJs(revision));
}

export async function setup(options: { dir?: string; env?: Record<string, string>; transport?: Partial<WhatsAppTransportOptions>; events?: TransportEvents } = {}): Promise<Harness> {
  stubWebVersion();
  const dir = options.dir ?? (await tempDir('wabot-wa-'));
  const settings = loadSettings({ cwd: dir, env: { PATH: process.env.PATH ?? '', API_KEY: 'k-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm', ...(options.env ?? {}) } });
  const sink = new PassThrough();
  const lines: string[] = [];
  /** until() callers, told of each log line and notice. */
  const watchers = new Set<() => void>();
  const poke = () => {
    for (const watch of [...watchers]) watch();
  };
  sink.on('data', (chunk: Buffer) => {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    queueMicrotask(poke); // after the code that logged: a state set just after its log line is seen
  });
  const log = createLogger({ level: 'debug', pretty: false, destination: sink });
  const sockets = new FakeSocketFactory();
  const printed: string[] = [];
  const received: IncomingMessage[] = [];
  const notices: Harness['notices'] = [];
  const notifier: OwnerNotifier = {
    raise: (key, text, options) => void (notices.push({ kind: 'raise', key, text, ...(options?.linkDown ? { linkDown: true } : {}) }), poke()),
    recover: (key, text) => void (notices.push({ kind: 'recover', key, text }), poke()),
  };
  const config = { host: '127.0.0.1', port: 3000, targetUserIds: [] } as unknown as BotConfig;
  const transport = new WhatsAppTransport({
    ...whatsAppSettings(settings, () => config),
    log,
    makeSocket: sockets.make,
    printQr: (qr) => printed.push(qr),
    random: () => 0.5,
    download: async () => Buffer.from('bytes'),
    notices: notifier,
    fetchVersion: () => fetchLatestWaWebVersion({}),
    ...options.transport,
  });
  await transport.start(async (m) => {
    received.push(m);
  }, options.events);
  const logs = () => lines.map((l) => JSON.parse(l) as Record<string, any>);
  const until = (check: () => boolean) =>
    new Promise<void>((resolve) => {
      const watch = () => check() && (watchers.delete(watch), resolve());
      watchers.add(watch);
      watch();
    });
  const h = { dir, transport, sockets, received, printed, notices, logs, messages: () => logs().map((l) => String(l.msg)), until };
  harnesses.push(h);
  return h;
}

/** Links a fresh session the way a QR scan does: qr → pair-success → 515 restart → open. */
export async function link(h: Harness): Promise<void> {
  h.sockets.last.qr();
  h.sockets.last.paired({ id: BOT_ME.id, name: BOT_ME.name });
  const count = h.sockets.sockets.length;
  h.sockets.last.close(DisconnectReason.restartRequired, 'Stream Errored (restart required)');
  await h.sockets.waitForSockets(count + 1);
  h.sockets.last.open(BOT_ME);
}

/** Stops every harness of the test and removes its folder. */
export async function cleanup(): Promise<void> {
  sinon.restore();
  // Every transport stops before any folder goes: two harnesses may share one folder (a restart on the same
  // session), and the one still running would write into the folder being removed.
  const stopping = harnesses.splice(0);
  for (const h of stopping) await h.transport.stop();
  for (const dir of new Set(stopping.map((h) => h.dir))) await rm(dir, { recursive: true, force: true });
}

/**
 * Fake timers (setTimeout, clearTimeout, Date) around each test of the `describe` it is called in, with every harness
 * stopped and its folder removed after the test. Call it before the suite's own `beforeEach` that sets up a harness.
 *
 * @example
 * const clock = fakeClockPerTest();
 * it('retries later', async () => { const h = await setup(); await clock.tickAsync(60_000); });
 */
export function fakeClockPerTest(): { tickAsync(ms: number): Promise<number> } {
  let clock: sinon.SinonFakeTimers | undefined;
  beforeEach(() => {
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: Date.now(), shouldClearNativeTimers: true });
  });
  afterEach(async () => {
    clock?.restore();
    await cleanup();
  });
  return { tickAsync: (ms) => clock!.tickAsync(ms) };
}
