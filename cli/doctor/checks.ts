import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { readFile, statfs } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { ffmpegBinary, versionProbe } from '../../core/kernel/capabilities/detect.js';
import { ytdlpStatus } from '../../core/kernel/capabilities/tool-age.js';
import { ConfigError, projectRoot } from '../../core/services/config/config-file.js';
import { audioKeysFrom, loadSettings, type Settings } from '../../core/services/config/settings.js';
import { createJail } from '../../core/services/jail/setup.js';
import { describeSupport } from '../../core/services/jail/support.js';
import { readInstanceLock } from '../../core/services/lifecycle/instance-lock.js';
import { probeGateways } from '../../core/services/providers/health.js';
import { checkChatLeg, maskKey, type LegCheck } from '../../core/services/providers/leg-check.js';
import { normalizeBaseUrl } from '../../core/services/providers/normalize.js';
import type { ProviderLeg } from '../../core/services/providers/types.js';
import { DATABASE_FILE, MIGRATED_DIR } from '../../core/services/store/database.js';
import { formatBytes } from '../../core/services/store/disk-space.js';
import type { DataSchema } from '../../core/services/store/schemas.js';
import { installedDataFiles } from '../data-schemas.js';
import { portInUseMessage } from '../run.js';
import { checkAudioKeys, checkSearchKey } from '../setup/key-checks.js';
import { checkDataFiles } from './data-files.js';
import { envFileWarnings, loadAccountConfig, type AccountConfig } from '../../app/account-config.js';

export type DoctorStatus = 'ok' | 'warn' | 'fail';

/** One line of the doctor's report: what was checked, how it stands, and the fix in words. Never a key. */
export interface DoctorCheck {
  name: string;
  status: DoctorStatus;
  detail: string;
  fix?: string;
}

export interface DoctorOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Most a network request may take (a hung gateway costs this much, in parallel with everything else); a shorter
   * UPSTREAM_TIMEOUT_MS wins. */
  networkTimeoutMs: number;
  /** Bound of each check as a whole. */
  checkTimeoutMs: number;
}

const ok = (name: string, detail: string): DoctorCheck => ({ name, status: 'ok', detail });
const warn = (name: string, detail: string, fix?: string): DoctorCheck => ({ name, status: 'warn', detail, fix });
const fail = (name: string, detail: string, fix?: string): DoctorCheck => ({ name, status: 'fail', detail, fix });

function fromLeg(name: string, check: LegCheck, fix: string): DoctorCheck {
  if (!check.ok) return fail(name, check.detail, fix);
  return check.degraded ? warn(name, check.detail) : ok(name, check.detail);
}

/** The newest TypeScript source against the last good build (the same rule `npm start` builds by). */
function buildCheck(root: string): DoctorCheck {
  const stamp = path.join(root, 'dist', '.build-stamp');
  if (!existsSync(stamp)) return fail('build', 'no finished build in dist/', 'run npm run build (npm start and npm run doctor build first)');
  let newest = 0;
  const walk = (dir: string) => {
    for (const entry of existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : []) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  for (const dir of ['app', 'cli', 'core', 'plugins', 'web']) walk(path.join(root, dir));
  if (statSync(stamp).mtimeMs < newest) return warn('build', 'dist/ is older than the sources', 'run npm run build (npm start does it too)');
  return ok('build', 'dist/ is current');
}

function nodeCheck(): DoctorCheck {
  const major = Number(process.versions.node.split('.')[0]);
  return major >= 20 ? ok('node', `Node.js ${process.versions.node}`) : fail('node', `Node.js ${process.versions.node} is too old`, 'install Node.js 20 or newer');
}

function settingsCheck(cwd: string, env: NodeJS.ProcessEnv): { check: DoctorCheck; settings?: Settings } {
  const envFile = path.resolve(cwd, (env.ENV_FILE ?? '').trim() || '.env');
  try {
    const settings = loadSettings({ cwd, env });
    const mode = existsSync(envFile) ? statSync(envFile).mode & 0o777 : undefined;
    if (mode !== undefined && mode & 0o077) return { settings, check: warn('.env', `${envFile} holds keys and other users of this machine can read it (mode ${mode.toString(8)})`, `chmod 600 ${envFile}`) };
    return { settings, check: ok('.env', existsSync(envFile) ? `${envFile}: valid` : 'no .env file: settings come from the environment') };
  } catch (err) {
    let settings: Settings | undefined;
    try {
      settings = loadSettings({ cwd, env, requireProviderKey: false });
    } catch {
      settings = undefined;
    }
    return { settings, check: fail('.env', `${existsSync(envFile) ? envFile : `${envFile} (missing)`}: ${(err as Error).message}`, 'run npm run setup') };
  }
}

/**
 * config.json through `loadAccountConfig`, the very function start uses: the doctor refuses exactly what start refuses,
 * in the same words. The file is only read (a missing one is said, not created).
 */
async function configCheck(settings: Settings | undefined, cwd: string, env: NodeJS.ProcessEnv): Promise<{ check: DoctorCheck; account?: AccountConfig }> {
  const file = settings?.configFile ?? path.resolve(cwd, (env.CONFIG_FILE ?? '').trim() || 'config.json');
  if (!existsSync(file)) return { check: warn('config.json', `${file} does not exist yet: it is made from config.example.json at the first start`, 'run npm run setup to write it with your number as owner') };
  if (!settings) return { check: warn('config.json', `${file}: not checked until .env is fixed (it says where config.json and the plugins are)`) };
  let account: AccountConfig;
  try {
    account = await loadAccountConfig({ cwd, settings });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { check: fail('config.json', `${file}: ${err.problems.join('; ')}`, 'correct those fields (the bot refuses to start with them)') };
  }
  const config = account.loaded.config;
  if (!config.owners.length) return { account, check: warn('config.json', `${file}: valid, but no owners: nobody gets the bot's notices or can approve new people`, 'npm run setup -- --owner <your number>') };
  return { account, check: ok('config.json', `${file}: valid (${config.owners.length} owner(s), access ${config.access.mode})`) };
}

/** Names in .env the bot does not read (typos, with the setting meant) and lines that are not settings. */
function envNamesCheck(settings: Settings, account: AccountConfig | undefined): DoctorCheck | undefined {
  const problems = envFileWarnings(settings, account?.plugins ?? []);
  if (!problems.length) return undefined;
  return warn('.env names', `${settings.envFile}: ${problems.join('; ')}`, 'correct or remove those lines: the bot ignores them');
}

/**
 * The plugins installed beside the bundled ones: every `pluginPackages` entry installed and loadable, every
 * `plugins.local/*` folder built (a failure here is what start logs as NOT LOADED), and which are installed but off.
 */
function pluginsCheck(account: AccountConfig): DoctorCheck[] {
  const config = account.loaded.config;
  const failures = account.discovery.failures.filter((f) => !f.source.startsWith('plugins/'));
  const checks: DoctorCheck[] = failures.map((f) => fail(`plugin ${f.source.replace(/^package /, '')}`, f.reason, 'the bot starts without it; fix it, or remove it from pluginPackages / plugins.local'));
  const installed = account.discovery.installed;
  const waiting = installed.filter((name) => config.plugins[name]?.enabled !== true);
  const on = installed.filter((name) => !waiting.includes(name));
  if (installed.length) checks.push(ok('plugins', [on.length && `installed and on: ${on.join(', ')}`, waiting.length && `installed but off until you enable them: ${waiting.join(', ')} (plugins.<name>.enabled: true in config.json, or the dashboard)`].filter(Boolean).join('; ')));
  else if (!failures.length) checks.push(ok('plugins', 'bundled plugins only (none in pluginPackages or plugins.local/)'));
  return checks;
}

async function gatewayChecks(settings: Settings, timeoutMs: number): Promise<DoctorCheck[]> {
  const gateways = ([['primary', settings.primary], ['second', settings.second]] as const).filter(([, g]) => g.apiKey);
  return Promise.all(
    gateways.map(async ([name, g]) => {
      const { v1, root } = normalizeBaseUrl(g.baseUrl);
      const leg = { name, kind: 'gateway', baseUrl: v1, rootUrl: root, apiKey: g.apiKey, model: g.model, premiumModel: g.premiumModel } satisfies ProviderLeg;
      const [[probe], chat] = await Promise.all([probeGateways([leg], timeoutMs), checkChatLeg({ baseUrl: g.baseUrl, apiKey: g.apiKey, model: g.model, timeoutMs })]);
      const label = `gateway ${name}`;
      const where = `${v1} (model ${g.model}, key ${maskKey(g.apiKey)})`;
      // A root that answers at all (often 404: gateways serve nothing at /) says nothing more; one that does not is a lead.
      const rootWords = probe.healthy ? '' : `; root ${probe.url} ${probe.detail}`;
      const vars = name === 'primary' ? 'PRIMARY_GATEWAY_API_KEY / _BASE_URL / _MODEL' : 'API_KEY / BASE_URL / MODEL';
      return fromLeg(label, { ...chat, detail: `${where}: ${chat.detail}${rootWords}` }, `correct ${vars} (npm run setup)`);
    }),
  );
}

async function audioCheck(settings: Settings, timeoutMs: number): Promise<DoctorCheck> {
  const keys = audioKeysFrom(settings.env);
  if (!keys.length) return warn('audio keys', 'none: voice notes are not transcribed', 'npm run setup (audio keys), or set AUDIO_API_KEYS');
  const checks = await checkAudioKeys(keys, settings.audio.baseUrl, settings.audio.chatModel, timeoutMs);
  const failed = checks.filter((c) => !c.ok);
  const words = failed.map((c) => `key ${c.index} (${maskKey(keys[c.index - 1])}): ${c.detail}`).join('; ');
  if (!failed.length) return ok('audio keys', `${keys.length} key(s) at ${settings.audio.baseUrl} accepted`);
  const fix = 'replace the failing key(s) in AUDIO_API_KEYS (npm run setup)';
  return failed.length === keys.length ? fail('audio keys', `none of ${keys.length} key(s) works: ${words}`, fix) : warn('audio keys', `${keys.length - failed.length} of ${keys.length} work; ${words}`, fix);
}

async function searchCheck(settings: Settings, timeoutMs: number): Promise<DoctorCheck> {
  const key = (settings.env.SEARCH_API_KEY ?? '').trim();
  if (!key) return warn('search key', 'none: web search uses the audio provider\'s search model when there is an audio key, else is off', 'npm run setup (search key), or set SEARCH_API_KEY');
  const base = (settings.env.SEARCH_BASE_URL ?? '').trim() || 'https://api.tavily.com';
  return fromLeg('search key', await checkSearchKey(key, base, timeoutMs), 'correct SEARCH_API_KEY / SEARCH_BASE_URL (npm run setup)');
}

async function jailCheck(settings: Settings): Promise<DoctorCheck> {
  const support = await createJail(settings).detect();
  const detail = describeSupport(support);
  if (!support.bwrap.ok) return fail('jail', detail, 'install bubblewrap 0.8+ (apt-get install bubblewrap) and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)');
  if (!support.cgroup.ok) return warn('jail', detail, 'run the service with a delegated cgroup (the systemd unit in deploy/ has Delegate=yes)');
  return ok('jail', detail);
}

/**
 * The ffmpeg line: ✔ for the system's or FFMPEG_PATH's; ⚠ for the build bundled in @ffmpeg-installer (ffmpeg 4.x from
 * 2018, with decoder bugs fixed since), which runs but should not decode strangers' media.
 */
export function ffmpegCheck(bin: { path: string; source: string }, versionLine: string): DoctorCheck {
  const version = versionLine.split(' ').slice(0, 3).join(' ');
  if (bin.source.startsWith('@ffmpeg-installer/')) {
    return warn('ffmpeg', `${version} (${bin.path}) is the build bundled with the bot, from 2018: it has decoder bugs fixed since, and every voice note, photo and video from a chat goes through it`, 'apt-get install ffmpeg (the bot then uses the system\'s), or set FFMPEG_PATH');
  }
  return ok('ffmpeg', `${version} (${bin.path}) from ${bin.source}`);
}

async function programChecks(settings: Settings): Promise<DoctorCheck[]> {
  const ffmpeg = async () => {
    const bin = ffmpegBinary(settings);
    try {
      return ffmpegCheck(bin, await versionProbe(bin.path, ['-version']));
    } catch (err) {
      return warn('ffmpeg', `ffmpeg from ${bin.source} does not run (${(err as Error).message}): voice notes and media conversion fail`, 'apt-get install ffmpeg, or set FFMPEG_PATH');
    }
  };
  const python = async () => {
    try {
      return ok('python', await versionProbe('python3', ['--version']));
    } catch (err) {
      return warn('python', `python3 not found (${(err as Error).message}): workspace code cannot run`, 'apt-get install python3');
    }
  };
  const ytdlp = async () => {
    const program = (settings.env.YTDLP_PATH ?? '').trim() || 'yt-dlp';
    try {
      const status = ytdlpStatus(await versionProbe(program, ['--version'], 8000), program === 'yt-dlp' ? 'on PATH' : 'YTDLP_PATH');
      return status.degraded ? warn('yt-dlp', status.detail) : ok('yt-dlp', status.detail);
    } catch {
      return warn('yt-dlp', `${program} not found: .mp3 and .dl links cannot be downloaded`, 'apt-get install yt-dlp, or set YTDLP_PATH');
    }
  };
  return Promise.all([ffmpeg(), python(), ytdlp()]);
}

async function diskCheck(dataDir: string, config: Record<string, any> | undefined): Promise<DoctorCheck> {
  let dir = dataDir;
  while (!existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  const s = await statfs(dir);
  const free = Number(s.bavail) * Number(s.bsize);
  const lowMb = typeof config?.data?.diskLowMb === 'number' ? config.data.diskLowMb : 200;
  const detail = `${formatBytes(free)} free for ${dataDir}`;
  if (free < 20 * 1024 * 1024) return fail('disk', `${detail}: writes will fail`, 'free some space');
  if (free < lowMb * 1024 * 1024) return warn('disk', `${detail} (below data.diskLowMb ${lowMb} MB)`, 'free some space');
  return ok('disk', detail);
}

/**
 * The data folder as this version keeps it: the store database opens and passes SQLite's quick check, no file of an
 * earlier layout is left untaken (`declared`: the paths the database replaced), and what the bot set aside is named.
 */
export async function dataCheck(dataDir: string, declared: Array<{ path: string; schema: DataSchema }>): Promise<DoctorCheck> {
  const name = 'data files';
  if (!existsSync(dataDir)) return ok(name, `${dataDir} does not exist yet (made at the first start)`);
  const report = await checkDataFiles(dataDir, declared);
  const list = (files: string[]) => `${files.slice(0, 5).join(', ')}${files.length > 5 ? ', …' : ''}`;
  if (typeof report.database === 'object') {
    return fail(
      name,
      `${DATABASE_FILE} ${report.database.problem.replace(/^the database /, '')}`,
      `stop the bot and restore ${dataDir} from a backup (npm run restore); started as it is, the bot sets ${DATABASE_FILE} aside (bytes kept, ${DATABASE_FILE}.corrupt-<time>) and starts with an empty one`,
    );
  }
  const bad = report.bad.filter((b) => b.file !== DATABASE_FILE);
  if (bad.length) {
    return fail(
      name,
      `${bad.length} file(s) of an earlier version do not match their schema: ${bad.slice(0, 5).map((b) => `${b.file} ${b.reason}`).join('; ')}${bad.length > 5 ? '; …' : ''}`,
      'at start the bot sets each aside (bytes kept) and that chat or feature starts empty; restore them from a backup (npm run restore) if they matter',
    );
  }
  const store = report.database === 'ok' ? `${DATABASE_FILE} passes its integrity check` : `${DATABASE_FILE} not made yet (made at the first start)`;
  if (report.earlier.length) {
    return warn(
      name,
      `${store}; ${report.earlier.length} file(s) of an earlier version not yet taken into ${DATABASE_FILE}: ${list(report.earlier)}`,
      `start the bot once (npm start): it takes them into ${DATABASE_FILE} and keeps the originals under ${path.join(dataDir, MIGRATED_DIR)}/ (a plugin's files, once that plugin is enabled)`,
    );
  }
  if (report.setAside.length) return warn(name, `${store}; ${report.setAside.length} file(s) set aside earlier: ${list(report.setAside)}`, 'look at them (bytes kept as they were), then delete them');
  return ok(name, `${store}; no file of an earlier version left`);
}

async function sessionCheck(dataDir: string): Promise<DoctorCheck> {
  const folder = path.join(dataDir, 'session_auth');
  const file = path.join(folder, 'creds.json');
  if (!existsSync(file)) return warn('session', 'not linked yet', 'npm start, then scan the QR code (or set PAIRING_PHONE for a pairing code)');
  const { BufferJSON } = await import('@whiskeysockets/baileys');
  const { credsProblem } = await import('../../core/adapters/whatsapp/auth-store.js');
  let creds: unknown;
  try {
    creds = JSON.parse(await readFile(file, 'utf8'), BufferJSON.reviver);
  } catch (err) {
    return fail('session', `${file} is corrupt (${(err as Error).message}): the bot refuses to start`, `restore creds.json from a backup, or delete ${folder} and link again`);
  }
  const problem = credsProblem(creds);
  if (problem) return fail('session', `${file} is corrupt (${problem}): the bot refuses to start`, `restore creds.json from a backup, or delete ${folder} and link again`);
  const me = (creds as { me?: { id?: string } }).me?.id;
  if (!me) return warn('session', 'credentials exist, but the phone was never linked with them', 'npm start, then scan the QR code');
  return ok('session', `linked as ${me.split(/[:@]/)[0]}`);
}

async function lockAndPortChecks(settings: Settings, config: Record<string, any> | undefined): Promise<DoctorCheck[]> {
  const holder = await readInstanceLock(settings.dataDir);
  const lock = holder
    ? ok('running', `a bot is running on this data folder (pid ${holder.pid ?? '?'}${holder.since ? ` since ${holder.since}` : ''})`)
    : ok('running', 'no bot is running on this data folder');
  const port = typeof config?.port === 'number' ? config.port : 3000;
  const host = typeof config?.host === 'string' ? config.host : '127.0.0.1';
  if (port === 0) return [lock, ok('web port', 'port 0: a free port is picked at start')];
  if (holder) return [lock, ok('web port', `${host}:${port} (not tried: the running bot uses it)`)];
  const free = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const server = net.createServer();
    server.once('error', (err) => resolve(err));
    server.listen(port, host, () => server.close(() => resolve(undefined)));
  });
  if (!free) return [lock, ok('web port', `${host}:${port} is free`)];
  if (free.code === 'EADDRINUSE') return [lock, fail('web port', portInUseMessage(port, host))];
  return [lock, fail('web port', `cannot listen on ${host}:${port} (${free.code ?? free.message})`, 'set another "port" or "host" in config.json')];
}

/** Bounds one check: a check that takes longer is reported as such instead of holding up the report. */
async function bounded(name: string, ms: number, run: () => Promise<DoctorCheck | DoctorCheck[]>): Promise<DoctorCheck[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<DoctorCheck[]>((resolve) => {
    timer = setTimeout(() => resolve([fail(name, `did not finish within ${Math.round(ms / 1000)} s`)]), ms);
  });
  try {
    const result = await Promise.race([run().then((r) => (Array.isArray(r) ? r : [r])), late]);
    return result;
  } catch (err) {
    return [fail(name, `the check failed: ${(err as Error).message}`)];
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Every check, in parallel, each bounded: nothing here starts the bot, takes its lock, or writes the account's
 * files. The result is in a fixed order (as listed), whatever finishes first.
 */
export async function runDoctor(options: DoctorOptions): Promise<{ checks: DoctorCheck[]; secrets: string[] }> {
  const { cwd, env, networkTimeoutMs: maxNet, checkTimeoutMs: limit } = options;
  const root = projectRoot();
  const { check: envCheck, settings } = settingsCheck(cwd, env);
  const networkMs = Math.min(maxNet, settings?.upstreamTimeoutMs ?? maxNet);
  const { check: cfgCheck, account } = await configCheck(settings, cwd, env);
  const config = account?.loaded.config;
  const names = settings && envNamesCheck(settings, account);
  const first = [nodeCheck(), buildCheck(root), envCheck, ...(names ? [names] : []), cfgCheck, ...(account ? pluginsCheck(account) : [])];
  const groups: Array<Promise<DoctorCheck[]>> = [Promise.resolve(first)];
  if (settings) {
    groups.push(
      bounded('gateways', limit, () => gatewayChecks(settings, networkMs)),
      bounded('audio keys', limit, () => audioCheck(settings, networkMs)),
      bounded('search key', limit, () => searchCheck(settings, networkMs)),
      bounded('jail', limit, () => jailCheck(settings)),
      bounded('programs', limit, () => programChecks(settings)),
      bounded('disk', limit, () => diskCheck(settings.dataDir, config)),
      bounded('data files', limit, async () => dataCheck(settings.dataDir, await installedDataFiles(settings, cwd))),
      bounded('session', limit, () => sessionCheck(settings.dataDir)),
      bounded('running', limit, () => lockAndPortChecks(settings, config)),
    );
  }
  const checks = (await Promise.all(groups)).flat();
  return { checks, secrets: settings?.secrets ?? [] };
}
