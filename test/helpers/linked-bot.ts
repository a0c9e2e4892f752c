import { PassThrough } from 'node:stream';
import { createApp, type App, type AppOptions } from '../../app/app.js';
import type { WhatsAppTransport } from '../../core/adapters/whatsapp/whatsapp-transport.js';
import { whatsAppTransportOf } from '../../app/testing/whatsapp.js';
import type { WhatsAppTransportOptions } from '../../core/adapters/whatsapp/options.js';
import { BOT_ME, DisconnectReason, FakeSocketFactory } from '../fakes/baileys-socket.js';

/** The real app over the real WhatsApp transport on a fake socket, linked (QR, pair, 515 restart, open) as `BOT_ME`. */
export interface LinkedBot {
  app: App;
  transport: WhatsAppTransport;
  sockets: FakeSocketFactory;
}

/**
 * Starts the app in `dir` (config already written) with `plugins` and links it over a fake Baileys socket;
 * `transport` overrides options of the transport (e.g. `download`, the media bytes of a received voice note).
 *
 * @example
 * const { app, sockets } = await startLinkedBot({ dir, env, plugins: [pingPlugin] });
 * sockets.last.emitMessage(waText({ from: ALICE, text: '.ping' }));
 */
export async function startLinkedBot(options: { dir: string; env: Record<string, string>; plugins: AppOptions['plugins']; logger?: AppOptions['logger']; transport?: Partial<WhatsAppTransportOptions> }): Promise<LinkedBot> {
  const app = await createApp({
    cwd: options.dir,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    plugins: options.plugins,
    ...(options.logger ? { logger: options.logger } : { logDestination: new PassThrough() }),
    skipHealthProbe: true,
  });
  const sockets = new FakeSocketFactory();
  // The transport as the kit's WhatsApp subpath makes it from the app's settings, on the fake socket instead of Baileys'.
  const transport = whatsAppTransportOf(app, {
    makeSocket: sockets.make,
    fetchVersion: async () => ({ version: [2, 3000, 1000000001], isLatest: true }),
    ...options.transport,
  });
  await app.connect(transport);
  sockets.last.qr();
  sockets.last.paired({ id: BOT_ME.id });
  sockets.last.close(DisconnectReason.restartRequired);
  await sockets.waitForSockets(2);
  sockets.last.open(BOT_ME);
  return { app, transport, sockets };
}
