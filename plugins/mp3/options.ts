import { Type, type Static } from '../../core/index.js';

/**
 * The mp3 plugin's limits (`plugins.mp3` in config.json), declared once: validated at start and by the dashboard,
 * delivered to handlers with the defaults filled in.
 */
export const mp3Options = Type.Object(
  {
    maxDurationMinutes: Type.Number({ title: 'Longest media (minutes)', exclusiveMinimum: 0, default: 60, description: 'longest media (minutes) downloaded or converted; default 60' }),
    maxDownloadMB: Type.Number({ title: 'Largest download (MB)', exclusiveMinimum: 0, default: 200, description: 'largest file fetched (download or replied media), MB; default 200' }),
    maxSendMB: Type.Number({ title: 'Largest file sent (MB)', exclusiveMinimum: 0, default: 64, description: 'largest file sent back (what WhatsApp accepts), MB; default 64' }),
    maxJobsPerUser: Type.Integer({ title: 'Jobs at once per person', minimum: 1, default: 1, description: 'jobs one user may run at once; default 1' }),
    maxJobsTotal: Type.Integer({ title: 'Jobs at once in all', minimum: 1, default: 3, description: 'jobs the bot runs at once; default 3' }),
    timeoutSeconds: Type.Number({ title: 'Job time limit (seconds)', exclusiveMinimum: 0, default: 600, description: 'a download or conversion running longer is stopped; default 600' }),
    progressIntervalMs: Type.Integer({ title: 'First progress update after (ms)', minimum: 0, default: 1500, description: 'time before the first progress edit; later gaps grow so the 20 edits last the whole timeoutSeconds (0: no pacing); default 1500' }),
    audioBitrateKbps: Type.Integer({ title: 'MP3 bitrate (kbps)', minimum: 32, maximum: 320, default: 192, description: 'MP3 bitrate; default 192' }),
  },
  { additionalProperties: false },
);

export type Mp3Options = Static<typeof mp3Options>;

export const MB = 1024 * 1024;

/**
 * Settings that run a program or open a hole in the download guard: read from the environment only, never from
 * config.json or the dashboard (a dashboard session must not be able to turn into running any program).
 */
export const ENV_SETTINGS = [
  { name: 'YTDLP_PATH', description: 'the yt-dlp program to run (default: yt-dlp on PATH)' },
  { name: 'MP3_ALLOW_PRIVATE_HOSTS', description: 'TESTS ONLY: the older name of EGRESS_ALLOW_PRIVATE_HOSTS ("true" lets links reach loopback/private addresses)' },
] as const;

/** The old config.json options these replace: option → environment setting. */
export const MOVED_TO_ENV = { ytdlpPath: 'YTDLP_PATH', allowPrivateHosts: 'MP3_ALLOW_PRIVATE_HOSTS' } as const;

/** The environment-only switches, read through the host (the download guard's test switch is the core's EGRESS_ALLOW_PRIVATE_HOSTS, or MP3_ALLOW_PRIVATE_HOSTS). */
export function envSwitches(host: { setting(name: string): string | undefined; settings: { egressAllowPrivateHosts: boolean } }): { ytdlpPath: string; allowPrivateHosts: boolean } {
  return { ytdlpPath: host.setting('YTDLP_PATH')?.trim() ?? '', allowPrivateHosts: host.settings.egressAllowPrivateHosts };
}
