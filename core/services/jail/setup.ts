import type { Settings } from '../config/settings.js';
import type { Logger } from '../log/logger.js';
import { Jail } from './jail.js';

function id(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 4294967294) throw new Error(`${name} must be a uid/gid number other than 0 (got "${value}")`);
  return n;
}

/**
 * The app's one jail. `JAIL_UID`/`JAIL_GID` (.env only) choose the unprivileged ids programs run as when the
 * service is root (default 65534, "nobody").
 *
 * @example const jail = createJail(settings);
 */
export function createJail(settings: Pick<Settings, 'env'>): Jail {
  const env = settings.env;
  return new Jail({
    uid: id(env.JAIL_UID, 'JAIL_UID') ?? id(env.WORKSPACE_SANDBOX_UID, 'WORKSPACE_SANDBOX_UID') ?? 65534,
    gid: id(env.JAIL_GID, 'JAIL_GID') ?? id(env.WORKSPACE_SANDBOX_GID, 'WORKSPACE_SANDBOX_GID') ?? 65534,
  });
}

/** Says plainly in the start log what the jail holds on this machine, and what it costs when part of it is off. */
export function reportJail(log: Logger, jail: Jail): void {
  const s = jail.support;
  if (!s) return;
  if (!s.bwrap.ok) {
    log.error(
      { reason: s.bwrap.reason },
      'the JAIL IS OFF: bubblewrap cannot run here. Python code from chats is refused; ffmpeg and yt-dlp still run with limits and an unprivileged uid, but WITHOUT namespaces: they could read any file that uid may read and reach the network directly. Install bubblewrap 0.8+ and allow unprivileged user namespaces to close this.',
    );
  }
  if (!s.cgroup.ok) {
    log.warn({ reason: s.cgroup.reason }, 'jail: no total bound: memory and CPU are limited per process and the process count per uid, not per run (the service may not create cgroups)');
  }
}
