import type { PluginSection } from '../../core/config/schema.js';

/** The mp3 plugin's limits and switches, as read from its `config.json` section with defaults filled in. */
export interface Mp3Options {
  /** Longest media (minutes) that is downloaded or converted; longer is refused up front when known. */
  maxDurationMinutes: number;
  /** Largest file (MB) fetched: a download, or replied media. */
  maxDownloadMB: number;
  /** Largest file (MB) sent back: what WhatsApp accepts for audio/video. */
  maxSendMB: number;
  /** Jobs one user may run at the same time. */
  maxJobsPerUser: number;
  /** Jobs the whole bot runs at the same time. */
  maxJobsTotal: number;
  /** A download or conversion taking longer than this is stopped. */
  timeoutSeconds: number;
  /** Shortest time between two progress edits of the status message. */
  progressIntervalMs: number;
  /** MP3 bitrate. */
  audioBitrateKbps: number;
}

export const DEFAULT_OPTIONS: Readonly<Mp3Options> = Object.freeze({
  maxDurationMinutes: 60,
  maxDownloadMB: 200,
  maxSendMB: 64,
  maxJobsPerUser: 1,
  maxJobsTotal: 3,
  timeoutSeconds: 600,
  progressIntervalMs: 1500,
  audioBitrateKbps: 192,
});

/** JSON schema of the plugin's options (validated at start and by the dashboard). */
export const optionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    maxDurationMinutes: { type: 'number', exclusiveMinimum: 0, description: 'longest media (minutes) downloaded or converted; default 60' },
    maxDownloadMB: { type: 'number', exclusiveMinimum: 0, description: 'largest file fetched (download or replied media), MB; default 200' },
    maxSendMB: { type: 'number', exclusiveMinimum: 0, description: 'largest file sent back (what WhatsApp accepts), MB; default 64' },
    maxJobsPerUser: { type: 'integer', minimum: 1, description: 'jobs one user may run at once; default 1' },
    maxJobsTotal: { type: 'integer', minimum: 1, description: 'jobs the bot runs at once; default 3' },
    timeoutSeconds: { type: 'number', exclusiveMinimum: 0, description: 'a download or conversion running longer is stopped; default 600' },
    progressIntervalMs: { type: 'integer', minimum: 0, description: 'shortest time between two progress edits; default 1500' },
    audioBitrateKbps: { type: 'integer', minimum: 32, maximum: 320, description: 'MP3 bitrate; default 192' },
  },
} as const;

/**
 * The plugin's options from its live config section, defaults for what is not set. The section was validated
 * against `optionsSchema`, so values have the right types.
 *
 * @example
 * const opts = readOptions(ctx.options); // { maxDurationMinutes: 60, ... }
 */
export function readOptions(section: PluginSection | undefined): Mp3Options {
  const out: Mp3Options = { ...DEFAULT_OPTIONS };
  const raw = (section ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(DEFAULT_OPTIONS) as Array<keyof Mp3Options>) {
    const value = raw[key];
    if (value !== undefined && typeof value === typeof DEFAULT_OPTIONS[key]) (out as unknown as Record<string, unknown>)[key] = value;
  }
  return out;
}

export const MB = 1024 * 1024;

/**
 * Settings that run a program or open a hole in the download guard: read from the environment only, never from
 * config.json or the dashboard (a dashboard session must not be able to turn into running any program).
 */
export const ENV_SETTINGS = [
  { name: 'YTDLP_PATH', description: 'the yt-dlp program to run (default: yt-dlp on PATH)' },
  { name: 'MP3_ALLOW_PRIVATE_HOSTS', description: 'TESTS ONLY: "true" lets links reach loopback/private addresses (turns the download guard off)' },
] as const;

/** The old config.json options these replace: option → environment setting. */
export const MOVED_TO_ENV = { ytdlpPath: 'YTDLP_PATH', allowPrivateHosts: 'MP3_ALLOW_PRIVATE_HOSTS' } as const;

/** The environment-only switches, read through the host. */
export function envSwitches(host: { setting(name: string): string | undefined }): { ytdlpPath: string; allowPrivateHosts: boolean } {
  return { ytdlpPath: host.setting('YTDLP_PATH')?.trim() ?? '', allowPrivateHosts: /^(1|true|yes)$/i.test(host.setting('MP3_ALLOW_PRIVATE_HOSTS')?.trim() ?? '') };
}
