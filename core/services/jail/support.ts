import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { detectCgroups, type CgroupSupport } from './cgroup.js';
import { systemLinks } from './mounts.js';

/** What this machine lets the jail do; found once at start and shown in the start log. */
export interface JailSupport {
  /** bubblewrap runs (as the jail's uid, closed to nested user namespaces), or why not. */
  bwrap: { ok: true; version: string } | { ok: false; reason: string };
  /** Whole-run limits through a cgroup, or why not. */
  cgroup: CgroupSupport;
  /** The uid and gid jailed programs run as. */
  uid: number;
  gid: number;
  /** The service is root: every jailed program first drops to `uid` with setpriv. */
  dropsRoot: boolean;
}

function run(cmd: string, args: string[], timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs, env: { PATH: '/usr/bin:/bin' } }, (err, stdout, stderr) => {
      if (err) reject(new Error((err as NodeJS.ErrnoException).code === 'ENOENT' ? `${cmd} not found` : (String(stderr).trim() || err.message).split('\n')[0]));
      else resolve(`${stdout}${stderr}`.trim());
    });
  });
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The uid/gid prefix that drops root before bubblewrap (bubblewrap then runs unprivileged, in its own user namespace). */
export function dropArgs(support: Pick<JailSupport, 'uid' | 'gid' | 'dropsRoot'>): string[] {
  if (!support.dropsRoot) return [];
  return ['/usr/bin/setpriv', `--reuid=${support.uid}`, `--regid=${support.gid}`, '--clear-groups', '--inh-caps=-all', '--no-new-privs', '--'];
}

/** Sandboxes that worked, by uid, gid and bubblewrap: a working sandbox does not stop working under a running process. */
const working = new Map<string, Promise<JailSupport>>();

/**
 * Probes the machine: can bubblewrap make a sandbox for the jail's uid with `--disable-userns` (no nested user
 * namespaces, bubblewrap 0.8+), and may the service create cgroups. A probe that found a working sandbox is kept for
 * the process (each bot of a test run would otherwise start two bubblewraps); one that did not is made again next time.
 *
 * @example const support = await detectJailSupport({ uid: 65534, gid: 65534 });
 */
export function detectJailSupport(options: { uid: number; gid: number; bwrap?: string }): Promise<JailSupport> {
  const key = JSON.stringify([options.uid, options.gid, options.bwrap ?? '', process.getuid?.()]);
  const known = working.get(key);
  if (known) return known;
  const probe = probeJailSupport(options);
  working.set(key, probe);
  void probe.then((support) => {
    if (!support.bwrap.ok && working.get(key) === probe) working.delete(key);
  }, () => working.delete(key));
  return probe;
}

async function probeJailSupport(options: { uid: number; gid: number; bwrap?: string }): Promise<JailSupport> {
  const dropsRoot = process.getuid?.() === 0;
  const base = { uid: dropsRoot ? options.uid : (process.getuid?.() ?? options.uid), gid: dropsRoot ? options.gid : (process.getgid?.() ?? options.gid), dropsRoot };
  const cgroup = detectCgroups();
  const bwrap = options.bwrap ?? '/usr/bin/bwrap';
  if (dropsRoot && !executable('/usr/bin/setpriv')) return { ...base, cgroup, bwrap: { ok: false, reason: 'the service runs as root and /usr/bin/setpriv (util-linux) is missing, so programs cannot drop root' } };
  if (!executable('/usr/bin/prlimit')) return { ...base, cgroup, bwrap: { ok: false, reason: '/usr/bin/prlimit (util-linux) is missing' } };
  // One child: the sandbox runs bubblewrap's own `--version`, which answers both questions (bubblewrap runs, and it
  // can make a sandbox here). Each spawn holds the event loop until its child has started (25-50 ms of a start under
  // load), so a second one for the version was time before "console chat ready". A bubblewrap outside /usr is bound
  // into the sandbox at its own path.
  const drop = dropArgs(base);
  const own = bwrap.startsWith('/usr/') ? [] : ['--ro-bind', bwrap, bwrap];
  const [cmd, ...rest] = [...drop, bwrap, '--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--ro-bind', '/usr', '/usr', ...systemLinks(), ...own, '--proc', '/proc', '--dev', '/dev', bwrap, '--version'];
  let sandboxFailed: Error;
  try {
    return { ...base, cgroup, bwrap: { ok: true, version: versionOf(await run(cmd!, rest)) } };
  } catch (err) {
    sandboxFailed = err as Error;
  }
  // No sandbox: the start log names the missing piece, bubblewrap itself or a bubblewrap that cannot make one here.
  let version: string;
  try {
    version = versionOf(await run(bwrap, ['--version']));
  } catch (err) {
    return { ...base, cgroup, bwrap: { ok: false, reason: `bubblewrap unavailable: ${(err as Error).message}` } };
  }
  return { ...base, cgroup, bwrap: { ok: false, reason: `bubblewrap ${version} cannot make a sandbox here (${sandboxFailed.message}); user namespaces may be forbidden` } };
}

function versionOf(answer: string): string {
  return answer.replace(/^bubblewrap\s*/, '');
}

/**
 * One line for the start-log table: what holds and what does not.
 *
 * @example describeSupport(s) // 'bubblewrap 0.8.0 · uid 65534 · total bound: cgroup v1 (memory, pids, cpu)'
 */
export function describeSupport(s: JailSupport): string {
  const total = s.cgroup.ok
    ? `total bound: cgroup v${s.cgroup.version} (memory, processes${s.cgroup.version === 2 || s.cgroup.cpuacct ? ', cpu' : ''})`
    : `no total bound (${s.cgroup.reason}): memory and CPU limited per process, few processes allowed`;
  if (s.bwrap.ok) return `bubblewrap ${s.bwrap.version} · uid ${s.uid} · ${total}`;
  return `JAIL OFF: ${s.bwrap.reason}. Python code is refused; media is converted without namespaces (the program could read what uid ${s.uid} may read and use the network) · ${total}`;
}
