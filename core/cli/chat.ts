#!/usr/bin/env node
import { createApp } from '../app.js';
import { ConsoleTransport } from '../transport/console.js';
import { startWebServer } from '../../web/server.js';
import { exitAfterFlush, runCli } from './run.js';

/**
 * `npm run chat`: the console chat. Same config, plugins and providers as the WhatsApp bot, and the same web
 * server, without a phone. Reads stdin; prints the bot's actions on stdout and logs on stderr.
 */
await runCli(async () => {
  const app = await createApp({ instanceLock: true });
  const transport = new ConsoleTransport();
  let web;
  try {
    web = await startWebServer(app, () => transport);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    // A local chat must not fail because the bot (or anything else) already uses the configured port.
    app.log.warn({ port: app.config.port }, 'the configured web port is in use; the console uses a free port instead');
    app.bot.setConfig({ ...app.config, port: 0 });
    web = await startWebServer(app, () => transport);
  }
  await app.connect(transport);
  app.log.info('console chat ready');
  await transport.done;
  await app.bot.idle();
  await app.stop();
  await web.close();
  exitAfterFlush(0);
});
if (process.exitCode) exitAfterFlush(process.exitCode as number);
