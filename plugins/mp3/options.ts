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
  /** The yt-dlp program (default `yt-dlp` on PATH). */
  ytdlpPath: string;
  /** TESTS ONLY: allow links to loopback/private addresses (turns off the SSRF protection). */
  allowPrivateHosts: boolean;
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
  ytdlpPath: '',
  allowPrivateHosts: false,
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
    ytdlpPath: { type: 'string', description: 'the yt-dlp program; default yt-dlp on PATH' },
    allowPrivateHosts: { type: 'boolean', description: 'TESTS ONLY: allow links to loopback/private addresses (turns off SSRF protection)' },
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
