import { definePlugin, type CapabilityStatus, type Plugin, type PluginHost, type PluginOffer } from '../../core/index.js';
import { atFirstUse, ytdlpStatus } from '../../core/builtin.js';
import type { Mp3Commands } from './commands.js';
import { ENV_SETTINGS, envSwitches, MOVED_TO_ENV, mp3Options, type Mp3Options } from './options.js';
import type { Resolver } from './url-guard.js';

type Host = PluginHost<Mp3Options>;

/*
 * A start loads only what declaring the commands needs: what they do (jobs, ffmpeg, yt-dlp, the download guard:
 * commands.ts) loads with the first `.mp3` or `.dl`.
 */

/**
 * TESTS ONLY, set programmatically (never from settings): a resolver for the download guard and the egress proxy,
 * and exact `address:port` destinations the proxy lets through although they are private (one loopback fake).
 */
export interface Mp3TestHooks {
  resolve?: Resolver;
  allowForTests?: string[];
  /** Loads the commands' module (commands.ts) at the first `.mp3` or `.dl`; default `import('./commands.js')`. */
  load?: () => Promise<typeof import('./commands.js')>;
}

/**
 * Creates the mp3 plugin. Each instance has its own job counters (tests create fresh ones; the default export is
 * the one the bot discovers).
 *
 * @example
 * const plugin = createMp3Plugin();
 * const bot = await startTestBot(plugin);
 */
export function createMp3Plugin(testHooks: Mp3TestHooks = {}): Plugin {
  return definePlugin({
    name: 'mp3',
    description: 'Converts media to MP3 and downloads videos from social-media links',
    options: mp3Options,
    settings: [...ENV_SETTINGS],
    movedToEnv: MOVED_TO_ENV,
    setup: (host) => setupMp3(host, testHooks),
  });
}

/** One running mp3 plugin: the yt-dlp it runs, and the `.mp3` / `.dl` commands (with their job counters, at first use). */
async function setupMp3(host: Host, testHooks: Mp3TestHooks): Promise<PluginOffer<Mp3Options>> {
  // Aborted at stop: the running jobs' programs are killed (the job counters live with the commands).
  const stopping = new AbortController();
  const startEnv = envSwitches(host);
  if (startEnv.ytdlpPath) {
    // A configured yt-dlp replaces the one on PATH: say in the start log which one is used and whether it runs.
    const bin = startEnv.ytdlpPath;
    // Only when YTDLP_PATH is set: the process runner loads then, not with every start.
    const { runProcess } = await import('./run-process.js');
    let status: CapabilityStatus;
    try {
      const { stdout } = await runProcess(bin, ['--version'], { timeoutMs: 8000 });
      status = ytdlpStatus(stdout.trim().split('\n')[0], `${bin}, from YTDLP_PATH`);
    } catch (err) {
      status = { ok: false, detail: `${bin} (YTDLP_PATH) does not run: ${(err as Error).message}` };
    }
    host.capabilities.setLive('ytdlp', () => status);
  }
  if (startEnv.allowPrivateHosts) host.log.warn(`${host.settings.egressAllowPrivateHostsFrom ?? 'EGRESS_ALLOW_PRIVATE_HOSTS'} is on: links to local/private addresses are fetched (meant for tests only)`);

  // Once per running plugin; a failed load is the command's error (reply and log), and the next use tries again.
  const handlers = atFirstUse(async (): Promise<Mp3Commands> => (await (testHooks.load ?? (() => import('./commands.js')))()).mp3Commands(host, testHooks, stopping));

  return {
    commands: [
      { command: 'mp3', help: 'reply to a video, voice note or audio to get it as MP3; or add a social-media link to get its sound', run: async (ctx) => (await handlers()).mp3(ctx) },
      { command: 'dl', help: 'add a social-media link (YouTube, TikTok, Instagram, X, Facebook…) to download its video or image', run: async (ctx) => (await handlers()).dl(ctx) },
    ],
    stop: () => stopping.abort(),
  };
}

export default createMp3Plugin();
