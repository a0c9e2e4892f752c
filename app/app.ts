import path from 'node:path';
import { Automation } from '../core/kernel/automation/api-actions.js';
import { Bot } from '../core/kernel/bot.js';
import { CORE_PARTS } from '../core/kernel/core-plugins/index.js';
import { ApiTokens } from '../core/services/automation/api-tokens.js';
import { Capabilities, capabilityMark } from '../core/kernel/capabilities/capabilities.js';
import { defineCoreCapabilities } from '../core/kernel/capabilities/detect.js';
import { createJail, reportJail } from '../core/services/jail/setup.js';
import { describeSupport } from '../core/services/jail/support.js';
import type { BotConfig } from '../core/services/config/schema.js';
import type { OperatorPort } from '../core/operator.js';
import { ensureDataDir, loadSettings, type Settings } from '../core/services/config/settings.js';
import { createAiService } from '../core/kernel/chat/ai-service.js';
import { BotMetrics } from '../core/services/metrics/bot-metrics.js';
import { instrumentTransport } from '../core/services/metrics/instrument-transport.js';
import { transportRestriction } from '../core/services/metrics/readiness.js';
import { createLogger, isPrettyLogger, type Logger } from '../core/services/log/logger.js';
import { acquireInstanceLock } from '../core/services/lifecycle/instance-lock.js';
import type { Plugin } from '../core/kernel/plugin/spec.js';
import { UserBudgets } from '../core/services/providers/budgets.js';
import { ProviderChain } from '../core/services/providers/provider-chain.js';
import { UsageLedger } from '../core/services/providers/usage.js';
import { removeLeftoverTempFiles } from '../core/services/store/atomic.js';
import { DataDomain, registerDataDomain } from '../core/services/store/data-domain.js';
import { closeDatabase } from '../core/services/store/database.js';
import { startControlChannel } from '../core/services/store/control-channel.js';
import { DataHealth, type SetAsideFile, type UnsavedFile } from '../core/services/store/data-health.js';
import { formatBytes, startDiskWatch, type FreeSpace } from '../core/services/store/disk-space.js';
import { HistoryStore, storedMessages } from '../core/services/store/history.js';
import { MemoryStore } from '../core/services/store/memory.js';
import { startRetentionSweeper, type RetentionSweeper } from '../core/services/store/retention.js';
import { privateChatIdOf, type Transport } from '../core/kernel/port/transport.js';
import { OwnerNotices } from '../core/services/notices/owner-notices.js';
import type { OwnerNotifier } from '../core/services/notices/owner-notifier.js';
import { Outbox, type PacingClock, type SendingLimits } from '../core/services/sending/outbox.js';
import type { AnswerPacing } from '../core/services/sending/answer-spacing.js';
import { buildStatusReport } from '../core/kernel/status/status-report.js';
import { KeyPool } from '../core/services/providers/key-pool.js';
import { legsCapability } from '../core/kernel/capabilities/legs-capability.js';
import type { StartCheck } from './start-check.js';
import { envFileWarnings, loadAccountConfig } from './account-config.js';
import { startEventWebhooks } from './event-webhooks.js';
import type { EventWebhooks } from '../core/services/webhooks/outbound.js';
import { observeAnswers } from '../core/services/webhooks/answer-events.js';

export interface AppOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Plugins to use instead of discovering `plugins/*` (tests). */
  plugins?: Plugin[];
  /** Folder to discover plugins in; default the project's `plugins/`. */
  pluginsDir?: string;
  logger?: Logger;
  /**
   * Where the product's own logger writes (JSON lines), instead of stderr. Tests use this rather than `logger`, so
   * they exercise the product's redaction list (every secret in the settings), not one they built themselves.
   */
  logDestination?: NodeJS.WritableStream;
  /** Log level instead of LOG_LEVEL (tests read debug lines). */
  logLevel?: string;
  /**
   * A chat in a terminal (`npm run chat` with stdin and stdout a terminal): the log goes to `<dataDir>/logs/<name>`,
   * and only warnings and errors to `terminal` (readable), so log lines never interleave with the chat.
   */
  logToFile?: { name: string; terminal: NodeJS.WritableStream };
  /** Skip the gateway health probe and the start check of each leg (tests of non-AI paths). */
  skipHealthProbe?: boolean;
  /** Take the data folder for this process alone (`npm start`, `npm run chat`); a second instance is refused. */
  instanceLock?: boolean;
  /**
   * How the answers of a turn are spaced on a transport that paces them (WhatsApp); default `DEFAULT_ANSWER_PACING`.
   * Tests about something else shorten it, so a group's second answer does not wait its 4 s of real time.
   */
  answerPacing?: AnswerPacing;
  /** The clock the outbox paces answers by, instead of the real one (a test holds it to see which answer waits). */
  answerClock?: PacingClock;
  /**
   * The pace of the messages the bot starts on its own, instead of config.json's `sending` (whose fastest is one a
   * second per chat and overall). Tests about something else give `UNPACED_SENDS`, so an errand's notice and its send
   * do not wait seconds of real time; the pace keeps its own tests.
   */
  sendPacing?: SendingLimits;
}

/** Everything a running service is made of. */
export interface App extends OperatorPort {
  settings: Settings;
  config: BotConfig;
  configFile: string;
  log: Logger;
  bot: Bot;
  chain: ProviderChain;
  usage: UsageLedger;
  /** Per-user budgets (today's tokens per user). */
  budgets: UserBudgets;
  capabilities: Capabilities;
  /** Prometheus metrics of this app (its own registry), served on `GET /metrics`. */
  metrics: BotMetrics;
  pluginFailures: Array<{ source: string; reason: string }>;
  /** Gateway probe results; filled in when the probe (run once connected) finishes. */
  gatewayHealth: Array<{ name: string; url: string; healthy: boolean; detail: string }>;
  /** What the start check (one tiny real request per leg, and the search key) found; filled in when it finishes. */
  startChecks: StartCheck[];
  /**
   * Resolves when the gateway health probe and the start check have finished and been logged. They start at
   * `connect` (after the caller's ready line); reading this before then starts them.
   */
  healthChecked: Promise<void>;
  /** Data files set aside at load (wrong shape / unreadable; bytes kept) and files that could not be saved. */
  dataProblems(): { setAside: SetAsideFile[]; unsaved: UnsavedFile[] };
  /** Free space of DATA_DIR (last measurement), for the dashboard. */
  freeSpace(): FreeSpace | undefined;
  /** Tells the owners about incidents (also `bot.notices`, `host.notices`). */
  notices: OwnerNotifier;
  /** The safe-sending limiter every bot-initiated message goes through. */
  outbox: Outbox;
  /** The one daily retention pass; hand it to a transport that keeps data for a limited time (`dailySweeps` option). */
  dailySweeps: Pick<RetentionSweeper, 'add' | 'whenSwept'>;
  /** The outbound event webhooks of config.json `webhooks` (their queue, for tests and the stop). */
  webhooks: EventWebhooks;
  /** Connects the transport and starts handling messages. */
  connect(transport: Transport): Promise<void>;
  /**
   * Stops taking messages, lets those being handled finish (config `shutdown.graceSeconds`), stops plugins and the
   * transport (WhatsApp: the socket is closed, the session kept), flushes every store and releases the data folder.
   * Rejects with UnsavedDataError (listing the files) when some data could not be written, so the caller exits
   * non-zero.
   */
  stop(): Promise<void>;
}

/** Thrown by `app.stop()` when data could not be written before the stop. */
export class UnsavedDataError extends Error {
  constructor(readonly files: UnsavedFile[]) {
    super(`data could not be saved before the stop: ${files.map((f) => `${f.file} (${f.reason})`).join('; ')}`);
    this.name = 'UnsavedDataError';
  }
}

/** The folders of the data files plugins declare (those without a `<placeholder>` in their folder). */
function pluginDataFolders(plugins: Plugin[]): string[] {
  return plugins.flatMap((p) => (p.dataFiles ?? []).map((f) => path.posix.dirname(f.path))).filter((folder) => !folder.includes('<')).map((folder) => (folder === '.' ? '' : folder));
}

/**
 * Builds the service: settings (.env under the real environment), config.json (created from the example when
 * missing, validated), logger, capabilities, plugins, stores, provider chain and bot; prints the start-log report.
 * Throws SettingsError / ConfigError with a message that says what to fix.
 *
 * @example
 * const app = await createApp();
 * await app.connect(new ConsoleTransport());
 */
export async function createApp(options: AppOptions = {}): Promise<App> {
  const cwd = options.cwd ?? process.cwd();
  const settings = loadSettings({ cwd, env: options.env });
  ensureDataDir(settings.dataDir);
  const logFile = options.logToFile ? path.join(settings.dataDir, 'logs', options.logToFile.name) : undefined;
  const log =
    options.logger ??
    createLogger({
      level: options.logLevel ?? settings.logLevel,
      secrets: settings.secrets,
      pretty: options.logDestination ? false : settings.logFormat ? settings.logFormat === 'pretty' : undefined,
      destination: options.logToFile?.terminal ?? options.logDestination,
      file: logFile,
    });
  if (logFile && options.logToFile) {
    const shown = path.relative(cwd, logFile).startsWith('..') ? logFile : path.relative(cwd, logFile);
    options.logToFile.terminal.write(`console: the log goes to ${shown}; only warnings and errors show here\n`);
  }
  // The jail's probe (bubblewrap making a sandbox, in child processes) starts before the plugins load, so its wait
  // overlaps theirs instead of following it; the sandbox capability below awaits this same probe.
  const jail = createJail(settings);
  jail.detect().catch(() => undefined);
  const { loaded, discovery, plugins } = await loadAccountConfig({ cwd, settings, plugins: options.plugins, pluginsDir: options.pluginsDir, log });
  log.info({ envFile: settings.envFile, configFile: loaded.file, dataDir: settings.dataDir }, 'account files: settings, config and data');
  if (loaded.created) log.warn({ file: loaded.file }, 'config.json was missing: created it from config.example.json; edit it (or use the /config dashboard)');
  const config = loaded.config;
  for (const problem of envFileWarnings(settings, plugins)) log.warn({ envFile: settings.envFile }, `${settings.envFile} ${problem}`);

  const capabilities = new Capabilities();
  defineCoreCapabilities(capabilities, settings);
  capabilities.define('sandbox', async () => {
    const support = await jail.detect();
    return { ok: support.bwrap.ok, detail: describeSupport(support), ...(support.bwrap.ok ? {} : { fix: 'install bubblewrap and allow unprivileged user namespaces (docs/owners/security.md); npm run doctor says which part is missing' }) };
  });

  for (const name of Object.keys(config.plugins)) {
    if (!plugins.some((p) => p.name === name)) log.warn({ plugin: name }, `config.json configures plugin "${name}", but no plugin of that name is installed`);
  }

  // Before anything reads or writes the data folder: two processes on one folder overwrite each other's files (and on
  // WhatsApp two sockets on one session knock each other off in a reconnect storm).
  const releaseLock = options.instanceLock
    ? await acquireInstanceLock(settings.dataDir, {
        onCompromised: (err) => bot.notices.raise('instance-lock-lost', `Lost the lock on the data folder ${settings.dataDir} (${err.message}): another process may be writing to it. Restart the bot.`),
      })
    : undefined;

  // Every store under DATA_DIR reports set-aside files and failed writes here (the log names the file).
  let bot!: Bot;
  const health = new DataHealth(settings.dataDir, log.child({ part: 'data' }), () => bot?.notices);
  // This app's data folder: its health, write gate and pending writes are its own (another app in this process, on
  // another folder, neither holds nor flushes them).
  const dataDomain = new DataDomain(health);
  const unregisterHealth = registerDataDomain(dataDomain);
  const leftovers = await removeLeftoverTempFiles([...new Set(['', 'history', 'memory', 'whatsapp', 'access', ...pluginDataFolders(plugins)])].map((f) => path.join(settings.dataDir, f)));
  if (leftovers.length) log.info({ files: leftovers }, `removed ${leftovers.length} temporary file(s) an interrupted write left behind (the data files are whole)`);
  const histories = new HistoryStore(settings.dataDir, storedMessages(config.history));
  const memories = new MemoryStore(settings.dataDir, 100);
  const usage = new UsageLedger(settings.dataDir, log, config.data.flushIntervalMs);
  usage.setQuotas(config.ai.quotaMainTokens, config.ai.quotaPremiumTokens);
  const budgets = new UserBudgets(settings.dataDir, Date.now, config.data.flushIntervalMs);
  const chain = new ProviderChain(settings, log.child({ part: 'providers' }), usage);
  // One health state per audio key: the chain's audio legs and the plugins using the keys share this pool.
  const audioKeys = new KeyPool(settings.audio.keys, log.child({ part: 'audio-keys' }));
  chain.useKeyPool(audioKeys);
  usage.onRecord((userId, role, tokens) => {
    if (userId && tokens > 0) budgets.spend(userId, role === 'premium', tokens).catch((err) => log.error({ err }, 'could not record a user budget'));
  });
  const metrics = new BotMetrics();
  chain.onOutcome(({ leg, outcome, cooldownMs }) => {
    metrics.countUpstream(leg, outcome);
    if (cooldownMs > 0) metrics.legCooldowns.inc({ leg, reason: outcome });
  });
  usage.onTokens((leg, tokens) => metrics.countTokens(leg, tokens));
  metrics.observe({ legs: () => chain.health(), audioKeys: () => capabilities.known('audio') ? capabilities.status('audio').counts : undefined });
  // Chat and premium follow the legs' live state: amber while a leg rests or was rejected, red when none can answer.
  const servesPremium = (leg: { premiumModel?: string }) => Boolean(leg.premiumModel);
  capabilities.setLive('chat', () => legsCapability(chain.health(), () => true, 'no provider key'), () => chain.anyHealthy());
  capabilities.setLive(
    'premium',
    () => {
      const health = chain.health();
      const status = legsCapability(health, servesPremium, 'no PRIMARY_GATEWAY_PREMIUM_MODEL or PREMIUM_MODEL set');
      // No premium model anywhere is a choice (off), not a fault; a premium leg that cannot answer is a fault.
      return health.some(servesPremium) ? status : { ...status, notConfigured: true };
    },
    () => chain.anyHealthy(servesPremium),
  );

  let transport: Transport | undefined;
  const sendPacing = options.sendPacing;
  const outbox = new Outbox(sendPacing ? () => sendPacing : () => bot.config.sending, log.child({ part: 'sending' }), undefined, options.answerPacing, options.answerClock);
  const notices = new OwnerNotices({
    log: log.child({ part: 'notices' }),
    owners: () => bot.config.owners,
    // The chat id is asked of the transport when the notice goes out, so notices raised before it connects wait.
    sendToOwner: async (owner, text) => {
      await outbox.attachedTransport();
      return outbox.sendText(privateChatIdOf(transport, owner), text);
    },
    limits: () => bot.config.notices,
  });
  // The bot's one retention timer: sweeps data/media (30 days) and data/generated (7 days) now and daily, and in the
  // same daily pass every log the plugins and the WhatsApp adapter keep for `keepDays`. It never keeps the process alive.
  const retention = startRetentionSweeper({ dataDir: settings.dataDir, log: log.child({ part: 'retention' }) });
  bot = new Bot({
    core: CORE_PARTS,
    dailySweeps: retention,
    notices,
    outbox,
    settings,
    config,
    log,
    plugins,
    failures: discovery.failures,
    configFile: loaded.file,
    dataHealth: health,
    capabilities,
    histories,
    memories,
    jail,
    audioKeys,
    createAi: (tools, quotedReader, turnPolicy) => createAiService({ chain, budgets, capabilities, config: () => bot.config, log: log.child({ part: 'ai' }), tools, quotedReader, turnPolicy, histories, persona: (chatId) => bot.access.personas()[chatId] }),
  });

  chain.useNotices(bot.notices, () => bot.config.ai.outageNoticeMinutes);
  const startedAt = Date.now();
  bot.statusSource = async () =>
    buildStatusReport({ startedAt, link: bot.session(), legs: chain.health(), capabilities, usageDays: (await usage.snapshot()).days, lastReply: bot.ai.lastReply?.() });

  // The gateway probe and the start check run once the bot is connected and answering (`connect`), never before:
  // they cost a start the loading of Node's fetch (undici) and their requests' work, and a hung gateway must not
  // delay `.ping` or `/ws`. Their lines come after the start report; a failure is logged, the bot runs on.
  const gatewayHealth: App['gatewayHealth'] = [];
  const startChecks: StartCheck[] = [];
  // A root that answers (even 404) says little: healthy roots are a detail (debug); an unreachable one is a warning.
  // Their modules load with them, after ready.
  const rootProbe = () =>
    import('../core/services/providers/health.js')
      .then(({ probeGateways }) => probeGateways(chain.legs(), Math.min(settings.upstreamTimeoutMs, 3000)))
      .then((results) => {
        gatewayHealth.push(...results);
        for (const h of results) {
          log[h.healthy ? 'debug' : 'warn']({ gateway: h.name, url: h.url, detail: h.detail }, `gateway ${h.name} ${h.healthy ? `root reachable (${h.detail})` : 'UNHEALTHY: AI answers may fail; non-AI commands keep working'}`);
        }
      });
  const legCheck = () =>
    import('./start-check.js')
      .then(({ runStartChecks }) => runStartChecks(chain.legs(), settings, log.child({ part: 'start-check' }), Math.min(settings.upstreamTimeoutMs, 8000)))
      .then((results) => {
        startChecks.push(...results);
        // A leg whose key or model is wrong is skipped from the first request on; every outcome shows in .status and
        // the dashboard's providers view.
        for (const r of results) chain.recordStartCheck(r.name, r);
      });
  let healthChecks: Promise<void> | undefined;
  /** Starts the probe and the start check once (at connect, or when a caller first awaits `healthChecked`). */
  const checkHealth = (): Promise<void> =>
    (healthChecks ??= options.skipHealthProbe
      ? Promise.resolve()
      : Promise.all([rootProbe(), settings.startupProbe ? legCheck() : undefined])
          .then(() => undefined)
          .catch((err) => log.warn({ err }, 'the start check failed; the bot runs on')));
  await Promise.all([capabilities.detectAll(), usage.load(), budgets.load()]);
  reportJail(log, jail);
  await bot.startPlugins();
  printStartReport(log, settings, bot, chain, capabilities, discovery.failures, discovery.installed, await usage.snapshot());
  // `npm run backup` asks the running bot through this socket to flush every store and hold writes during the copy.
  const control = await startControlChannel(
    settings.dataDir,
    {
      hold: () => dataDomain.holdWrites(),
    },
    log.child({ part: 'control' }),
  ).catch((err) => {
    log.warn({ err }, 'the backup control channel could not start: npm run backup will copy without holding writes');
    return undefined;
  });
  const disk = await startDiskWatch({ dataDir: settings.dataDir, thresholdMb: () => bot.config.data.diskLowMb, log, notices: () => bot.notices });
  const free = disk.current();
  if (free) log.info({ dataDir: settings.dataDir, freeBytes: free.freeBytes, totalBytes: free.totalBytes }, `data folder ${settings.dataDir}: ${formatBytes(free.freeBytes)} free of ${formatBytes(free.totalBytes)}`);
  notices.announce();
  const eventWebhooks = startEventWebhooks(bot, settings, log, metrics);
  const automation = {
    tokens: new ApiTokens(settings.dataDir),
    actions: new Automation({
      deliver: (delivery) => bot.automation.deliver(delivery),
      promptAs: (chatId, senderId, text, system) => bot.promptAs(chatId, senderId, text, system),
      histories,
      owner: () => transport?.operatorChatId?.() ?? (bot.config.owners[0] ? privateChatIdOf(transport, bot.config.owners[0]) : undefined),
      log: log.child({ part: 'api' }),
    }),
  };

  return {
    settings,
    get config() {
      return bot.config;
    },
    configFile: loaded.file,
    log,
    bot,
    chain,
    usage,
    budgets,
    capabilities,
    metrics,
    pluginFailures: discovery.failures,
    gatewayHealth,
    startChecks,
    get healthChecked() {
      return checkHealth();
    },
    dataProblems: () => ({ setAside: [...health.setAside], unsaved: health.unsaved() }),
    freeSpace: () => disk.current(),
    notices,
    outbox,
    dailySweeps: retention,
    webhooks: eventWebhooks.webhooks,
    automation,
    async connect(connecting) {
      transport = connecting;
      metrics.observe({ transport: () => ({ connected: connecting.session().status === 'linked', restricted: Boolean(transportRestriction(connecting)) }) });
      // The bot and the outbox see the transport through the metrics wrapper: every message and send is counted there.
      // …and through the answers' observer, which tells the event webhooks of each message answered.
      const counted = observeAnswers(instrumentTransport(connecting, metrics), (answer) => {
        if (bot.automation.events.heard('message.answered')) bot.automation.events.emit('message.answered', { ...answer });
      });
      outbox.attach(counted);
      await bot.start(counted);
      // After the caller's "ready" line (its code after this await runs first): nothing before ready waits for them.
      setImmediate(() => void checkHealth());
    },
    async stop() {
      retention.stop();
      eventWebhooks.stop();
      const graceEnds = Date.now() + bot.config.shutdown.graceSeconds * 1000;
      await bot.drain(graceEnds - Date.now());
      // No new notices from here; those already queued (and other bot-initiated sends) get what is left of the grace.
      notices.stop();
      await outbox.settle(Math.max(0, graceEnds - Date.now()));
      const dropped = outbox.close();
      if (dropped) log.warn({ dropped }, `${dropped} message(s) the bot meant to send on its own were still waiting in the send queue and were not sent`);
      chain.stop();
      disk.stop();
      await control?.close();
      let failed: string[];
      try {
        const results = await Promise.allSettled([bot.stop(0), usage.flush(), budgets.flush()]);
        failed = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
        // Last: every store has written, and the WAL goes into the database file.
        try {
          closeDatabase(settings.dataDir);
        } catch (err) {
          failed.push(`the store database could not be closed (${(err as Error).message})`);
        }
      } finally {
        unregisterHealth();
        // Released even when data could not be saved: the process is ending either way.
        await releaseLock?.();
      }
      // Every store reports to the data health: the files still unsaved after this last try are named.
      const unsaved = health.unsaved();
      if (unsaved.length) {
        log.error({ files: unsaved.map((f) => f.file) }, `stopped with ${unsaved.length} data file(s) NOT saved: ${unsaved[0].reason}`);
        throw new UnsavedDataError(unsaved);
      }
      if (failed.length) throw new Error(`data could not be saved: ${failed.join('; ')}`);
    },
  };
}

/**
 * The one start-log report. A few lines at info and warn: what works, and each thing that is off with its fix in
 * words; the full tables (chain, every capability, every plugin, the settings plugins read) follow at debug, and
 * `npm run doctor` checks each in depth. Names of providers and settings only, never keys.
 */
function printStartReport(
  log: Logger,
  settings: Settings,
  bot: Bot,
  chain: ProviderChain,
  capabilities: Capabilities,
  failures: Array<{ source: string; reason: string }>,
  installed: readonly string[],
  usage: Awaited<ReturnType<UsageLedger['snapshot']>>,
): void {
  const config = bot.config;
  // Pretty lines carry the row in the message already; the fields are for JSON readers.
  const fields = <T extends object>(f: T): T | object => (isPrettyLogger(log) ? {} : f);
  const legs = chain.legs();
  const report = capabilities.report();
  const states = bot.plugins();
  const notLoaded = failures.filter((f) => !f.source.startsWith('plugin '));
  const active = states.filter((s) => s.enabled && s.started && !s.refused && !s.core).map((s) => s.plugin.name);
  const works = report.filter((c) => c.ok).map((c) => (c.name === 'chat' ? `chat (${legs.map((l) => l.name).join(' → ')})` : c.degraded ? `${c.name} (impaired)` : c.name));
  log.info(fields({ works: report.filter((c) => c.ok).map((c) => c.name), plugins: active }), `start report: works: ${works.join(', ') || 'nothing'}; plugins on: ${active.join(', ') || 'none'}`);
  // Who needs each missing capability: the owner sees what it costs, not only its name.
  const needsOf = (s: (typeof states)[number]) => [...(s.plugin.needs ?? []), ...(s.instance?.handlers ?? []).flatMap((h) => h.needs ?? []), ...(s.instance?.tools ?? []).flatMap((t) => t.needs ?? []), ...(s.instance?.observers ?? []).flatMap((o) => o.needs ?? [])];
  const users = (name: string) => states.filter((s) => s.enabled && !s.refused && needsOf(s).includes(name)).map((s) => s.plugin.name);
  // Features never set up (or declined in set-up) are one calm line together; WARN is for what is broken.
  const notSetUp = report.filter((c) => !c.ok && c.notConfigured);
  if (notSetUp.length) {
    const names = [...new Set(notSetUp.flatMap((c) => featureNames(c.name)))];
    log.info(fields({ off: notSetUp.map((c) => c.name) }), `  off: ${names.join(', ')} — \`npm run doctor\` says how to turn them on`);
  }
  function featureNames(capability: string): string[] {
    // Named as the owner knows them: the plugins that need it (audio → voice, imageGen → imagine), else its own name.
    const needing = users(capability);
    return needing.length ? needing : [capability];
  }
  for (const c of report.filter((c) => !c.ok && !c.notConfigured)) {
    const hit = users(c.name).filter((name) => name !== c.name);
    log.warn(
      fields({ capability: c.name, ok: false, detail: c.detail, fix: c.fix, plugins: hit }),
      `  off: ${c.name}${hit.length ? ` (${hit.join(', ')})` : ''}: ${c.detail}${c.fix ? ` — fix: ${c.fix}` : ''}`,
    );
  }
  // Working but impaired (an old yt-dlp, a leg cooling down): the owner sees what is wrong and the fix, not only "impaired".
  for (const c of report.filter((c) => c.ok && c.degraded)) {
    log.warn(fields({ capability: c.name, ok: true, degraded: true, detail: c.detail, fix: c.fix }), `  impaired: ${c.name}: ${c.detail}${c.fix ? ` — fix: ${c.fix}` : ''}`);
  }
  for (const s of states) {
    // Off for want of a capability is said in the capability's line above; these are the other reasons.
    const missingNeeds = capabilities.missing(s.plugin.needs ?? []);
    if (s.refused) log.warn(fields({ plugin: s.plugin.name, state: 'refused', reason: s.refused.message }), `  off: plugin ${s.plugin.name}: ${s.refused.message}`);
    else if (s.enabled && !s.started && !missingNeeds.length) log.warn(fields({ plugin: s.plugin.name, state: 'inactive', reason: s.problem }), `  off: plugin ${s.plugin.name}: ${s.problem}`);
    // Observers with needs of their own that are missing: the plugin runs, they do not; the line says what is off.
    else if (s.enabled && s.started && !missingNeeds.length) {
      const observersOff = (s.instance?.observers ?? []).flatMap((o) => {
        // Lacking only what was never set up: already in the one "off:" line.
        const lacking = capabilities.missing(o.needs ?? []).filter((name) => !capabilities.status(name).notConfigured);
        return lacking.length ? [`missing ${lacking.join(', ')}: ${o.missing ?? 'an observer is not run'}`] : [];
      });
      if (observersOff.length) log.warn(fields({ plugin: s.plugin.name, state: 'degraded', reason: observersOff.join('; ') }), `  off in part: plugin ${s.plugin.name}: ${observersOff.join('; ')}`);
    }
    if (s.core && !s.core.canTurnOff && config.plugins[s.plugin.name]?.enabled === false) {
      log.warn(fields({ plugin: s.plugin.name, ignored: `plugins.${s.plugin.name}.enabled` }), `  config.json turns off ${s.plugin.name}, a core plugin that cannot be turned off (${s.core.why}); plugins.${s.plugin.name}.enabled is ignored: remove it`);
    }
  }
  // Plugins refused at registration are listed above; these are the ones that could not even be loaded.
  for (const f of notLoaded) log.warn(fields({ plugin: f.source, state: 'not loaded', reason: f.reason }), `  ${f.source} NOT LOADED: ${f.reason}`);
  const off = states.filter((s) => !s.enabled && !s.refused).map((s) => s.plugin.name);
  // A plugin the owner installed is off until they enable it: said apart, so its folder is not taken for broken.
  const waiting = off.filter((name) => installed.includes(name) && config.plugins[name]?.enabled === undefined);
  const turnedOff = off.filter((name) => !waiting.includes(name));
  if (waiting.length) log.info(fields({ installedOff: waiting }), `  installed, off until you enable it: ${waiting.join(', ')} (plugins.<name>.enabled: true in config.json, or the dashboard)`);
  if (turnedOff.length) log.info(fields({ disabled: turnedOff }), `  turned off in config.json: ${turnedOff.join(', ')} (the dashboard or plugins.<name>.enabled turns them on)`);
  if (settings.egressAllowPrivateHosts) {
    log.warn(fields({ setting: settings.egressAllowPrivateHostsFrom }), `  ${settings.egressAllowPrivateHostsFrom} is on: links and downloads may reach local and private addresses (this machine, its network). Meant for tests only: remove it from .env`);
  }
  if (!settings.configToken) log.info('  dashboard: off — fix: set CONFIG_TOKEN in .env (npm run setup makes one) to edit settings at /config');
  if (config.access.mode === 'pairing' && !config.owners.length && !settings.configToken) {
    log.warn(
      'access.mode is "pairing" but config.json lists no owners and CONFIG_TOKEN is not set: NOBODY CAN APPROVE a pairing code, so strangers are never let in (only the person at npm run chat can). Add your number to "owners", set CONFIG_TOKEN for the dashboard, or set access.mode to "everyone".',
    );
  }
  // Plugins' own top-level sections of config.json: an invalid one is named (the plugin runs on its default).
  for (const section of bot.configSections()) {
    if (section.problems.length) log.error(fields({ section: section.key, plugin: section.plugin, problems: section.problems }), `  config.json ${section.key} (${section.plugin}) INVALID: ${section.problems.join('; ')}; ${section.plugin} uses the default until it is fixed (the file is left as it is)`);
  }
  if (settings.startupProbe) log.info(`  checking each provider${settings.env.SEARCH_API_KEY?.trim() ? ' and the search key' : ''} with one tiny request (STARTUP_PROBE=off skips it); the bot answers meanwhile`);

  // The details, for LOG_LEVEL=debug (and npm run doctor).
  log.debug({ chain: legs.map((l) => `${l.name} (${l.model}${l.premiumModel ? `, premium ${l.premiumModel}` : ''})`) }, `provider chain: ${legs.map((l) => l.name).join(' → ') || 'none'}`);
  log.debug({ audioKeys: settings.audio.keys.length }, `audio keys configured: ${settings.audio.keys.length}`);
  log.debug(`CONFIG_TOKEN: ${settings.configToken ? 'set' : 'not set (the /config dashboard is off)'}`);
  log.debug({ accessMode: config.access.mode, groupsPolicy: config.groups.policy }, `who is answered: access.mode "${config.access.mode}", groups.policy "${config.groups.policy}"`);
  log.debug(`capabilities (${report.filter((c) => c.ok).length} of ${capabilities.names().length} available):`);
  for (const c of report) {
    log.debug(fields({ capability: c.name, ok: c.ok, ...(c.degraded ? { degraded: true } : {}), detail: c.detail }), `  ${capabilityMark(c)} ${c.name.padEnd(10)} ${c.detail}`);
  }
  log.debug(`plugins (${states.length + notLoaded.length}):`);
  for (const s of states) {
    const missing = capabilities.missing(s.plugin.needs ?? []);
    const state = s.refused ? `OFF: ${s.refused.message}` : !s.enabled ? 'disabled in config.json' : !s.started ? `inactive: ${s.problem}` : missing.length ? `active, degraded: missing ${missing.join(', ')}` : 'active';
    const core = s.core ? (s.core.canTurnOff ? ' (core plugin)' : ' (core plugin, always on)') : '';
    log.debug(fields({ plugin: s.plugin.name, state, ...(s.core ? { core: true } : {}) }), `  ${s.plugin.name.padEnd(10)} ${state}${core}`);
  }
  // Settings that plugins declare they read: set or not, never the value.
  for (const s of states) {
    for (const d of s.plugin.settings ?? []) {
      const set = Boolean(settings.env[d.name]?.trim());
      log.debug(fields({ setting: d.name, set, plugin: s.plugin.name }), `  ${d.name.padEnd(22)} ${set ? 'set' : 'not set'} (${s.plugin.name}: ${d.description})`);
    }
  }
  const today = new Date().toISOString().slice(0, 10);
  const todayUsage = Object.entries(usage.days?.[today] ?? {}).map(([k, c]) => `${k}: ${c.total} tokens`);
  log.debug({ totals: usage.totals, quotas: usage.quotas }, `token usage today: ${todayUsage.join(', ') || 'none yet'}`);
}
