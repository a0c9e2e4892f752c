#!/usr/bin/env node
import { createApp } from '../app/app.js';
import { ffmpegBinary } from '../core/kernel/capabilities/detect.js';
import { startWebServer } from '../web/server.js';
import { whatsAppSettings } from '../app/whatsapp-settings.js';
import { setUpWhenNothingConfigured } from './first-run.js';
import type { Transport } from '../core/kernel/port/transport.js';
import { CannotStartError, exitAfterFlush, portInUseMessage, runCli, stopOnSignals } from './run.js';

/** `npm start`: the WhatsApp bot. */
await runCli(async () => {
  const stopped = await setUpWhenNothingConfigured({ cwd: process.cwd(), env: process.env, terminal: Boolean(process.stdin.isTTY && process.stdout.isTTY), say: (text) => process.stdout.write(text) });
  if (stopped !== undefined) {
    process.exitCode = stopped;
    return;
  }
  const app = await createApp({ instanceLock: true });
  // A network fault deep inside the WhatsApp library must never end the service: log it and keep running.
  process.on('unhandledRejection', (err) => app.log.error({ err }, 'unhandled rejection (the bot keeps running)'));
  const { WhatsAppTransport, AuthStateCorruptError } = await import('../core/adapters/whatsapp/whatsapp-transport.js');
  const { addOwnLidToConfig } = await import('./own-lid-config.js');
  const log = app.log.child({ part: 'whatsapp' });
  const transport: Transport = new WhatsAppTransport({
    ...whatsAppSettings(app.settings, () => app.config),
    dailySweeps: app.dailySweeps,
    log,
    onReconnect: (reason) => app.metrics.reconnects.inc({ reason }),
    notices: app.bot.notices,
    ffmpegPath: ffmpegBinary(app.settings).path,
    // Video previews are made by ffmpeg in the core jail, like every other decode of media from chats.
    jail: app.bot.jail,
    // The bot's own LID counts as a target id at once; it is also written into config.json (and said once in the log).
    onLinked: async (me) => {
      if (!me.lid) return;
      const updated = await addOwnLidToConfig(app.configFile, app.config, me.lid, log);
      if (updated) app.bot.setConfig(updated);
    },
  });
  let web;
  try {
    web = await startWebServer(app, () => transport);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    await app.stop().catch(() => undefined);
    throw new CannotStartError(portInUseMessage(app.config.port, app.config.host));
  }
  const server = web;
  // SIGTERM/SIGINT: no new messages, those being handled finish (bounded), stores flush, the socket closes without
  // logging out; exit 0, or 1 naming what could not be saved. A second signal exits at once.
  stopOnSignals(app, server);
  try {
    await app.connect(transport);
  } catch (err) {
    await web.close();
    if (err instanceof AuthStateCorruptError) {
      process.stderr.write(`\nCannot start: ${err.message}\n\n`);
      process.exitCode = 1;
      return;
    }
    throw err;
  }
  app.log.info('ready');
});
if (process.exitCode) exitAfterFlush(process.exitCode as number);
