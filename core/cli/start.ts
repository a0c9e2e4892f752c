#!/usr/bin/env node
import { createApp } from '../app.js';
import { startWebServer } from '../../web/server.js';
import type { Transport } from '../transport/transport.js';
import { exitAfterFlush, runCli } from './run.js';

/** `npm start`: the WhatsApp bot. */
await runCli(async () => {
  const app = await createApp();
  const { WhatsAppTransport } = await import('../transport/whatsapp/whatsapp-transport.js');
  const transport: Transport = new WhatsAppTransport({ settings: app.settings, config: () => app.config, log: app.log.child({ part: 'whatsapp' }) });
  const web = await startWebServer(app, () => transport);
  await app.connect(transport);
  app.log.info('ready');
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'stopping');
    await app.stop().catch((err) => app.log.error({ err }, 'stop failed'));
    await web.close();
    exitAfterFlush(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
});
if (process.exitCode) exitAfterFlush(process.exitCode as number);
