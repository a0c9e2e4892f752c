#!/usr/bin/env node
import { createApp } from '../app/app.js';
import { reportUnsaved } from '../core/services/lifecycle/stop-signals.js';
import { ConsoleTransport } from '../core/adapters/console/console-transport.js';
import { AbovePrompt } from '../core/adapters/console/above-prompt.js';
import type { App } from '../app/app.js';
import type { Transport } from '../core/kernel/port/transport.js';
import type { WebServer } from '../web/server.js';
import { exitAfterFlush, runCli, stopOnSignals } from './run.js';

/**
 * `npm run chat`: the console chat. Same config, plugins and providers as the WhatsApp bot, and the same web
 * server, without a phone. Reads stdin; prints the bot's actions on stdout and logs on stderr (in a terminal: the
 * log to data/logs/chat.log, only warnings and errors on stderr).
 */
await runCli(async () => {
  // In a terminal the log stays out of the chat: all of it to data/logs/chat.log, warnings and errors above the
  // prompt. Piped (scripts, tests), logs stay on stderr exactly as before.
  const terminal = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const logs = terminal ? new AbovePrompt(process.stderr) : undefined;
  const app = await createApp({ instanceLock: true, ...(logs ? { logToFile: { name: 'chat.log', terminal: logs } } : {}) });
  const transport = new ConsoleTransport({ debounceMs: app.config.conversation.debounceMs, logs });
  // The web server is started once the chat is ready (below); a stop first waits for it, so it is always closed.
  let web: Promise<WebServer | undefined> = Promise.resolve(undefined);
  // SIGTERM/SIGINT: a clean stop like the WhatsApp bot's (answers being made finish, stores flush, exit code says
  // whether everything was saved).
  const stopOnce = stopOnSignals(app, { close: async () => (await web)?.close() });
  await app.connect(transport);
  app.log.info('console chat ready');
  // After ready: nothing the chat does needs the dashboard, and loading it (Koa and its pages, ~90 modules) was a
  // tenth of a start. A web server that cannot start still ends the chat with exit 1, as it did before ready.
  const starting = startConsoleWebServer(app, () => transport);
  web = starting.catch(() => undefined);
  starting.catch(async (err: Error) => {
    app.log.error({ err }, `the web server could not start, so the chat stops: ${err.message}`);
    await stopOnce().catch((stopErr: Error) => reportUnsaved(app.log, stopErr));
    exitAfterFlush(1);
  });
  await transport.done;
  // End of input: every line's work finishes (no grace limit: a script waits for its last answer).
  await app.bot.idle();
  try {
    await stopOnce();
  } catch (err) {
    reportUnsaved(app.log, err as Error);
    exitAfterFlush(1);
    return;
  }
  exitAfterFlush(0);
});
if (process.exitCode) exitAfterFlush(process.exitCode as number);

/** The same web server as the WhatsApp bot's; a configured port another program holds gives way to a free one. */
async function startConsoleWebServer(app: App, transport: () => Transport): Promise<WebServer> {
  const { startWebServer } = await import('../web/server.js');
  try {
    return await startWebServer(app, transport);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    // A local chat must not fail because the bot (or anything else) already uses the configured port.
    app.log.warn({ port: app.config.port }, 'the configured web port is in use; the console uses a free port instead');
    app.bot.setConfig({ ...app.config, port: 0 });
    return startWebServer(app, transport);
  }
}
