import { PassThrough } from 'node:stream';
import { rm } from 'node:fs/promises';
import { makeWASocket, proto } from '@whiskeysockets/baileys';
import type { BotConfig } from '../../core/services/config/schema.js';
import { loadSettings } from '../../core/services/config/settings.js';
import { createLogger } from '../../core/services/log/logger.js';
import type { IncomingMessage } from '../../core/kernel/port/message.js';
import type { TransportEvents } from '../../core/kernel/port/transport.js';
import { WhatsAppTransport } from '../../core/adapters/whatsapp/whatsapp-transport.js';
import type { WhatsAppTransportOptions } from '../../core/adapters/whatsapp/options.js';
import { whatsAppSettings } from '../../app/whatsapp-settings.js';
import { WhatsAppWireServer } from '../fakes/whatsapp-wire-server.js';
import { tempDir } from './checkout.js';

/** The real transport (Baileys' socket, the auth store on disk) linked by QR to the project's wire server. */
export interface WireLink {
  transport: WhatsAppTransport;
  server: WhatsAppWireServer;
  dir: string;
  qrs: string[];
  /** Every message the transport handed on, in order. */
  received: IncomingMessage[];
  logs: () => Array<Record<string, any>>;
  messages: () => string[];
  /** Resolves once `check` holds, checked now and after each log line, QR and handed-on message; rejects after `timeoutMs`. */
  until(check: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** The logger's destination, its lines parsed as they come, and waits rechecked after each line and at each `poke`. */
export interface LogWatch {
  /** Hand it to the logger as its destination. */
  sink: PassThrough;
  lines: Array<Record<string, any>>;
  /** Rechecks the waits now (after a QR or a handed-on message). */
  poke(): void;
  /** Resolves once `check` holds, checked now and at each log line and poke; rejects after `timeoutMs`. */
  until(check: () => boolean, what: string, timeoutMs?: number): Promise<void>;
}

export function watchLog(): LogWatch {
  const watchers = new Set<() => void>();
  const poke = () => {
    for (const watch of [...watchers]) watch();
  };
  const sink = new PassThrough();
  const lines: Array<Record<string, any>> = [];
  sink.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, any>);
    queueMicrotask(poke);
  });
  const until = (check: () => boolean, what: string, timeoutMs = 20_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => (watchers.delete(watch), reject(new Error(`timed out waiting for ${what}`))), timeoutMs);
      const watch = () => check() && (watchers.delete(watch), clearTimeout(timer), resolve());
      watchers.add(watch);
      watch();
    });
  return { sink, lines, poke, until };
}

/**
 * Links a started transport that shows `qr` as a phone does (scan → 515 → login → open), waits for its pre-key upload
 * and then for it to go online, so people's devices on the server can write to it and its events flow.
 */
export async function linkByQr(server: WhatsAppWireServer, transport: WhatsAppTransport, qr: string, log: LogWatch): Promise<void> {
  server.scan(qr);
  await server.waitForConnections(2);
  await log.until(() => transport.session().status === 'linked', 'the link to open');
  await server.waitFor(() => (server.botPreKeysLeft() > 0 ? true : undefined), "the bot's pre-key upload");
  // A fresh link holds Baileys' events (send failures among them) until the phone's history sync notice, or 20 s.
  // The phone sends one of a kind the bot does not take (full history), so the link is online at once.
  // (Baileys waits from the offline notice, which came before the upload.) Events flow again once the notice is
  // handed on, ignored.
  const Type = proto.Message.ProtocolMessage.Type;
  const notice = await server.deliver(server.person(server.user, server.lidUser), { protocolMessage: { type: Type.HISTORY_SYNC_NOTIFICATION, historySyncNotification: { syncType: proto.HistorySync.HistorySyncType.FULL } } });
  await log.until(() => log.lines.some((x) => x.id === notice && String(x.msg).startsWith('ignored a WhatsApp message')), 'the link to go online');
}

/**
 * Starts the real WhatsApp transport against a fresh `WhatsAppWireServer` and links it as a phone does (QR → scan →
 * 515 → login → open), then waits for its pre-key upload, so people's devices on the server can write to it
 * (`unlinked`: stops once the first QR is shown).
 *
 * @example
 * const l = await linkOnWire({ events: { onEdit } });
 * await l.server.deliver(l.server.person('15551230001'), { conversation: 'hi' });
 */
export async function linkOnWire(o: { events?: TransportEvents; transport?: Partial<WhatsAppTransportOptions>; config?: Record<string, unknown>; unlinked?: boolean } = {}): Promise<WireLink> {
  const dir = await tempDir('wabot-wire-link-');
  const server = await WhatsAppWireServer.start();
  const settings = loadSettings({ cwd: dir, env: { PATH: process.env.PATH ?? '', API_KEY: 'k-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm', WA_WEBSOCKET_URL: server.url } });
  const log = watchLog();
  const qrs: string[] = [];
  const received: IncomingMessage[] = [];
  const config = { host: '127.0.0.1', port: 0, targetUserIds: [], ...(o.config ?? {}) } as unknown as BotConfig;
  const transport = new WhatsAppTransport({
    ...whatsAppSettings(settings, () => config),
    log: createLogger({ level: 'debug', pretty: false, destination: log.sink }),
    printQr: (qr) => void (qrs.push(qr), log.poke()),
    random: () => 0.5,
    backoff: { baseMs: 50, maxMs: 100, stableMs: 600_000 },
    fetchVersion: async () => ({ version: [2, 3000, 1234567], isLatest: true }),
    // Baileys' own socket, its uploads trusting the wire server's media host (HTTPS on 127.0.0.1, a test certificate).
    makeSocket: (config) => makeWASocket({ ...config, fetchAgent: server.mediaAgent }),
    ...o.transport,
  });
  const logs = () => [...log.lines];
  const link: WireLink = {
    transport,
    server,
    dir,
    qrs,
    received,
    logs,
    messages: () => logs().map((l) => String(l.msg)),
    until: log.until,
    async stop() {
      await transport.stop();
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await transport.start(async (m) => void (received.push(m), log.poke()), o.events);
    await server.waitForConnections(1);
    await log.until(() => qrs.length === 1, 'the QR');
    // `unlinked`: the QR is on offer, no phone scanned it.
    if (o.unlinked) return link;
    await linkByQr(server, transport, qrs[0], log);
    return link;
  } catch (err) {
    await link.stop();
    throw err;
  }
}
