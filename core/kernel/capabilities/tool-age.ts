import type { CapabilityStatus } from '../../api/capability-status.js';

/** yt-dlp follows the sites it reads; a release older than this fails on most of them. */
export const YTDLP_MAX_AGE_DAYS = 183;

/**
 * The ytdlp capability from its `--version` answer (a release date, `2024.08.06`): usable, but amber with the fix
 * when the release is older than about six months.
 *
 * @example ytdlpStatus('2023.03.04', 'yt-dlp on PATH') // { ok: true, degraded: true, detail: 'yt-dlp 2023.03.04 … is 32 months old …' }
 */
export function ytdlpStatus(version: string, where: string, now = Date.now()): CapabilityStatus {
  const detail = `yt-dlp ${version} (${where})`;
  const date = /^(\d{4})\.(\d{1,2})\.(\d{1,2})/.exec(version.trim());
  if (!date) return { ok: true, detail };
  const released = Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]));
  const days = Math.floor((now - released) / 86_400_000);
  if (days <= YTDLP_MAX_AGE_DAYS) return { ok: true, detail };
  const age = days >= 60 ? `${Math.floor(days / 30.44)} months` : `${days} days`;
  return {
    ok: true,
    degraded: true,
    detail: `${detail} is ${age} old: most sites fail with an old yt-dlp. Update it: pip install -U yt-dlp (or yt-dlp -U for the standalone binary; on Debian the backports package)`,
  };
}
