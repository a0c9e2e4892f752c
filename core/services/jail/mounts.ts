import { realpathSync } from 'node:fs';
import path from 'node:path';

/** Where a job's files appear inside the jail (neutral names: nothing of the host's layout shows). */
export const INSIDE = { in: '/in', out: '/out', work: '/work', tmp: '/tmp', bin: '/opt/jail/bin', lib: '/opt/jail/lib', egress: '/run/egress.sock' } as const;

/** The merged-/usr symlinks of the host (Debian: /bin → usr/bin, …), recreated inside so programs find libraries. */
export function systemLinks(): string[] {
  const args: string[] = [];
  for (const name of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    try {
      const target = realpathSync(`/${name}`);
      if (target.startsWith('/usr/')) args.push('--symlink', path.relative('/', target), `/${name}`);
    } catch {
      /* not on this host */
    }
  }
  return args;
}

export interface MountPlan {
  /** Host folder shown read-only at /in. */
  inDir?: string;
  /** Host folder shown writable at /out. */
  outDir?: string;
  /** Size of the empty tmpfs at /work (seeded and collected through pipes), bytes. */
  workBytes?: number;
  tmpBytes: number;
  /** Programs outside /usr (their readable copies, at /opt/jail/bin/<name>) and libraries (at /opt/jail/lib/<name>), read-only. */
  programsOutsideUsr?: Array<{ host: string; inside: string }>;
  /** Host path of the egress proxy's socket, shown at /run/egress.sock; also shows /etc/ssl for certificates. */
  egressSocket?: string;
  env: Record<string, string>;
  cwd: string;
}

/**
 * The bubblewrap options of one run. Visible inside: /usr read-only, a private /proc of the run's own PID namespace,
 * a minimal /dev, small private tmpfs folders, and the job's own /in, /out, /work. No /etc (but /etc/ssl for
 * downloads), /home, /root, project, data folder, host processes or network. Passed to bubblewrap through a pipe
 * (`--args`), so the host paths here never appear in the command line that /proc/1/cmdline shows inside.
 */
export function bwrapOptions(plan: MountPlan): string[] {
  const args = [
    '--unshare-all', '--unshare-user', '--disable-userns',
    '--die-with-parent', '--new-session', '--clearenv',
    '--hostname', 'jail',
    '--ro-bind', '/usr', '/usr',
    ...systemLinks(),
    // Shared libraries reached through alternatives links (Debian's ffmpeg needs libblas that way); nothing else of /etc.
    '--ro-bind-try', '/etc/alternatives', '/etc/alternatives',
    '--ro-bind-try', '/etc/ld.so.cache', '/etc/ld.so.cache',
    '--proc', '/proc',
    '--dev', '/dev',
    '--perms', '1777', '--size', String(plan.tmpBytes), '--tmpfs', INSIDE.tmp,
  ];
  for (const [name, value] of Object.entries(plan.env)) args.push('--setenv', name, value);
  if (plan.inDir) args.push('--ro-bind', plan.inDir, INSIDE.in);
  if (plan.outDir) args.push('--bind', plan.outDir, INSIDE.out);
  if (plan.workBytes !== undefined) args.push('--size', String(plan.workBytes), '--tmpfs', INSIDE.work);
  for (const p of plan.programsOutsideUsr ?? []) args.push('--ro-bind', p.host, p.inside);
  if (plan.egressSocket) args.push('--ro-bind-try', '/etc/ssl', '/etc/ssl', '--ro-bind-try', '/etc/ca-certificates', '/etc/ca-certificates', '--bind', plan.egressSocket, INSIDE.egress);
  args.push('--chdir', plan.cwd);
  return args;
}
