import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeJsonAtomic } from '../../services/store/atomic.js';
import type { Settings } from '../../services/config/settings.js';
import type { Capabilities } from './capabilities.js';
import type { CapabilityStatus } from '../../api/capability-status.js';
import { ytdlpStatus } from './tool-age.js';

/** Runs a program and returns its first output line, or throws. Bounded in time so start-up never hangs. */
export function probe(cmd: string, args: string[], timeoutMs = 4000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }, (err, stdout, stderr) => {
      if (err) reject(new Error((err as NodeJS.ErrnoException).code === 'ENOENT' ? `${cmd} not found` : (stderr || err.message).split('\n')[0]));
      else resolve(`${stdout}${stderr}`.trim().split('\n')[0] ?? '');
    });
  });
}

/** Where version answers are remembered between starts (next to the compiled core, never in git). */
const PROBE_CACHE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '.probe-cache.json');
let probeCache: Record<string, string> | undefined;

/** The full path of a command on PATH (or the path itself when it has a slash), or undefined. */
function locate(cmd: string): string | undefined {
  const candidates = cmd.includes('/') ? [cmd] : (process.env.PATH ?? '/usr/bin:/bin').split(':').filter(Boolean).map((dir) => path.join(dir, cmd));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/**
 * `probe` for a version question whose answer only changes with the binary: remembered per binary (path, size and
 * modification time), so a start does not pay for launching python for `yt-dlp --version` every time.
 */
export async function versionProbe(cmd: string, args: string[], timeoutMs = 4000): Promise<string> {
  const file = locate(cmd);
  if (!file) throw new Error(`${cmd} not found`);
  const stat = statSync(file);
  const key = `${file}|${stat.size}|${stat.mtimeMs}|${args.join(' ')}`;
  if (!probeCache) {
    try {
      probeCache = JSON.parse(readFileSync(PROBE_CACHE, 'utf8')) as Record<string, string>;
    } catch {
      probeCache = {};
    }
  }
  const known = probeCache[key];
  if (typeof known === 'string') return known;
  const line = await probe(file, args, timeoutMs);
  probeCache[key] = line;
  await writeJsonAtomic(PROBE_CACHE, probeCache).catch(() => undefined);
  return line;
}

/**
 * The ffmpeg binary to use on untrusted media: `FFMPEG_PATH` when set; else the system's (`/usr/bin/ffmpeg`, or
 * `ffmpeg` on PATH), which the distribution keeps patched; only when there is none, the build shipped in the
 * `@ffmpeg-installer/ffmpeg` package (ffmpeg 4.x from 2018, with known decoder bugs since fixed).
 * `ffmpeg-static` would download its binary at install time, which fails without network.
 */
export function ffmpegBinary(settings: Pick<Settings, 'ffmpegPath'>, systemCandidates: string[] = ['/usr/bin/ffmpeg', 'ffmpeg']): { path: string; source: string } {
  if (settings.ffmpegPath) return { path: settings.ffmpegPath, source: 'FFMPEG_PATH' };
  for (const candidate of systemCandidates) {
    const found = locate(candidate);
    if (found) return { path: found, source: 'the system' };
  }
  try {
    const require = createRequire(import.meta.url);
    const installer = require('@ffmpeg-installer/ffmpeg') as { path: string };
    return { path: installer.path, source: '@ffmpeg-installer/ffmpeg (bundled 2018 build: install the system ffmpeg for untrusted media)' };
  } catch {
    return { path: 'ffmpeg', source: 'system PATH' };
  }
}

const yes = (detail: string): CapabilityStatus => ({ ok: true, detail });
const no = (detail: string, fix?: string): CapabilityStatus => ({ ok: false, detail, ...(fix ? { fix } : {}) });
const notSetUp = (detail: string): CapabilityStatus => ({ ok: false, notConfigured: true, detail });

/**
 * Declares the core's capabilities, detected from the settings and the machine (the provider chain, the helper
 * programs). A plugin's own capabilities are declared by the plugin (`provides`), never here.
 */
export function defineCoreCapabilities(caps: Capabilities, settings: Settings): void {
  const gateways = [settings.primary, settings.second].filter((g) => g.apiKey);
  const chatLegs = gateways.length + settings.audio.keys.length;
  caps.define('chat', () => (chatLegs ? yes(`${chatLegs} provider leg(s)`) : no('no provider key')), undefined, 'run npm run setup (or set API_KEY, BASE_URL and MODEL in .env); npm run doctor checks each provider');
  caps.define('premium', () => {
    const n = gateways.filter((g) => g.premiumModel).length;
    return n ? yes(`premium model on ${n} gateway(s)`) : notSetUp('no PRIMARY_GATEWAY_PREMIUM_MODEL or PREMIUM_MODEL set');
  }, undefined, 'set PREMIUM_MODEL (or PRIMARY_GATEWAY_PREMIUM_MODEL) in .env');
  caps.define('python', async () => {
    try {
      return yes(await versionProbe('python3', ['--version']));
    } catch (err) {
      return no(`python3 not found (${(err as Error).message})`, 'install Python 3 (Debian: apt install python3)');
    }
  });
  caps.define('ytdlp', async () => {
    try {
      return ytdlpStatus(await versionProbe('yt-dlp', ['--version'], 8000), 'on PATH');
    } catch {
      return no('yt-dlp not found', 'install yt-dlp (Debian: apt install yt-dlp), or set YTDLP_PATH in .env');
    }
  });
  caps.define('ffmpeg', async () => {
    const bin = ffmpegBinary(settings);
    try {
      const line = await versionProbe(bin.path, ['-version']);
      return yes(`${line.split(' ').slice(0, 3).join(' ')} (${bin.path}) from ${bin.source}`);
    } catch (err) {
      return no(`ffmpeg from ${bin.source} does not run (${(err as Error).message})`, 'install ffmpeg (Debian: apt install ffmpeg), or set FFMPEG_PATH in .env');
    }
  });
  // 'sandbox' (the jail: bubblewrap, cgroups, uid) is defined by the app with the jail it creates (core/services/jail/setup.ts).
}
