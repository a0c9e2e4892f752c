import { spawn, spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { promises as fs } from 'node:fs';
import path from 'node:path';

/** Limits of one run (from the plugin options). */
export interface RunLimits {
  timeLimitSeconds: number;
  cpuSeconds: number;
  memoryMb: number;
  maxProcesses: number;
  maxOutputBytes: number;
  /** Largest file the code may write (RLIMIT_FSIZE): what is left of the quota. */
  maxWriteBytes: number;
  tmpMb: number;
}

export interface RunRequest {
  /** The workspace folder on the host; it becomes /work inside. */
  dir: string;
  /** The script, relative to the workspace (already checked with checkFileName). */
  script: string;
  /** The system python inside /usr (see systemPython). */
  python: string;
  limits: RunLimits;
  /** Run without bubblewrap (owner opt-in `unsafeNoSandbox`). */
  unsandboxed?: boolean;
  /** When the service is root: the uid/gid the code runs as. */
  dropTo?: { uid: number; gid: number };
  /** Called every ~500 ms while the run lasts; returning a reason stops the run (disk quota watchdog). */
  watchdog?: () => Promise<string | undefined>;
}

export interface RunResult {
  output: string;
  exitCode: number | null;
  signal: string | null;
  /** Why the run was stopped from outside, if it was. */
  stopped?: 'time' | 'output' | 'watchdog' | 'cpu' | 'disk';
  stoppedDetail?: string;
  truncated: boolean;
  /** The code hit the memory limit (MemoryError, or killed while allocating). */
  outOfMemory: boolean;
  /** The launcher could not set up the limits / drop privileges. */
  setupFailed: boolean;
  ms: number;
}

/**
 * Runs inside the sandbox before the user's code: sets the resource limits, drops root (when the service runs as
 * root, bubblewrap keeps only CAP_SETUID/CAP_SETGID for this step), proves it dropped, then execs python on the
 * script. Limits are set here, inside the new namespaces, so RLIMIT_NPROC counts only sandboxed processes.
 */
const LAUNCHER = `
import json, os, resource, sys
cfg = json.loads(sys.argv[1])
try:
    for name, value in cfg["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (value, value))
    drop = cfg.get("drop")
    if drop:
        os.setgroups([])
        os.setgid(drop["gid"])
        os.setuid(drop["uid"])
        if os.getuid() == 0 or os.geteuid() == 0 or os.getgid() == 0:
            raise SystemExit("could not drop root")
    os.umask(0o022)
    os.chdir(cfg["cwd"])
    os.environ["PWD"] = cfg["cwd"]
except BaseException as err:
    sys.stderr.write("sandbox setup failed: %s\\n" % (err,))
    os._exit(125)
os.execv(cfg["python"], [cfg["python"], "-E", "-s", "-B", "-u", "--", cfg["script"]] )
`;

/** Exit code the launcher uses when the limits could not be applied (nothing of the user's code ran). */
export const SETUP_FAILED_EXIT = 125;

// Found at start (the plugin's start log says whether code can run), without loading this module: python-runtime.ts.
export { systemPython } from './python-runtime.js';

let disableUserns: boolean | undefined;

/** Whether this bubblewrap knows `--disable-userns` (0.8+) and the kernel allows it; checked once. */
export function disableUsernsWorks(): boolean {
  if (disableUserns === undefined) {
    const probe = spawnSync('bwrap', ['--unshare-user', '--disable-userns', '--ro-bind', '/usr', '/usr', ...systemLinks(), '/usr/bin/true'], { env: { PATH: '/usr/bin:/bin' }, timeout: 4000, stdio: 'ignore' });
    disableUserns = probe.status === 0;
  }
  return disableUserns;
}

/** The merged-/usr symlinks of the host (Debian: /bin → usr/bin, …), recreated inside so programs find libraries. */
function systemLinks(): string[] {
  const args: string[] = [];
  for (const name of ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']) {
    const host = `/${name}`;
    try {
      const target = realpathSync(host);
      if (target.startsWith('/usr/')) args.push('--symlink', path.relative('/', target), host);
    } catch {
      /* not on this host */
    }
  }
  return args;
}

/**
 * The bubblewrap command line. Visible inside: /usr read-only (plus the /bin, /lib… links), a private /proc of the
 * new PID namespace, a minimal /dev, a small private /tmp, and the workspace read-write at /work. Not visible: /etc,
 * /home, /root, the project, data/ (sessions, other workspaces), the host's processes and network.
 */
export function bwrapArgs(req: Pick<RunRequest, 'dir' | 'dropTo' | 'limits'>): string[] {
  const args = [
    '--unshare-ipc', '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-cgroup-try',
    // As root: no user namespace (a uid-0 mapping would exempt the code from RLIMIT_NPROC); the launcher drops to
    // an unprivileged uid. Otherwise: an unprivileged user namespace, closed to further nesting where supported.
    ...(req.dropTo ? ['--cap-drop', 'ALL', '--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID'] : ['--unshare-user', ...(disableUsernsWorks() ? ['--disable-userns'] : [])]),
    '--die-with-parent', '--new-session', '--clearenv',
    '--setenv', 'PATH', '/usr/local/bin:/usr/bin:/bin',
    '--setenv', 'HOME', '/work',
    '--setenv', 'LANG', 'C.UTF-8',
    '--setenv', 'PYTHONIOENCODING', 'utf-8',
    '--hostname', 'sandbox',
    '--ro-bind', '/usr', '/usr',
    ...systemLinks(),
    '--proc', '/proc',
    '--dev', '/dev',
    '--perms', '1777', '--size', String(req.limits.tmpMb * 1024 * 1024), '--tmpfs', '/tmp',
    '--bind', req.dir, '/work',
    // The launcher enters /work after dropping root: root without capabilities may not enter the sandbox user's folder.
    '--chdir', '/',
  ];
  return args;
}

function rlimits(limits: RunLimits): Record<string, number> {
  return {
    RLIMIT_CPU: limits.cpuSeconds,
    RLIMIT_AS: limits.memoryMb * 1024 * 1024,
    RLIMIT_NPROC: limits.maxProcesses,
    RLIMIT_FSIZE: Math.max(0, limits.maxWriteBytes),
    RLIMIT_NOFILE: 64,
    RLIMIT_CORE: 0,
  };
}

/**
 * Runs a python script with limits: under bubblewrap (or, only with the owner's unsafe opt-in, directly), killed at
 * the wall-time limit, stopped when it prints more than the output cap or the watchdog objects.
 *
 * @example
 * const result = await runPython({ dir, script: 'main.py', python: '/usr/bin/python3', limits });
 */
export async function runPython(req: RunRequest): Promise<RunResult> {
  const started = Date.now();
  const inside = req.unsandboxed ? path.join(req.dir, req.script) : `/work/${req.script}`;
  const launcherConfig = JSON.stringify({ rlimits: rlimits(req.limits), drop: req.dropTo, python: req.python, script: inside, cwd: req.unsandboxed ? req.dir : '/work' });
  const pythonArgs = [req.python, '-I', '-S', '-c', LAUNCHER, launcherConfig];
  const [command, args, cwd] = req.unsandboxed
    ? [req.python, pythonArgs.slice(1), req.dir]
    : ['bwrap', [...bwrapArgs(req), ...pythonArgs], '/'];

  return new Promise<RunResult>((resolve) => {
    // Only PATH reaches bubblewrap; inside, --clearenv starts from nothing: no service variable leaks.
    const child = spawn(command, args, { cwd, env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    let stopped: RunResult['stopped'];
    let stoppedDetail: string | undefined;
    let finished = false;

    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const stop = (why: NonNullable<RunResult['stopped']>, detail?: string) => {
      if (stopped || finished) return;
      stopped = why;
      stoppedDetail = detail;
      kill();
    };
    const onData = (chunk: Buffer) => {
      if (kept >= req.limits.maxOutputBytes) return;
      const room = req.limits.maxOutputBytes - kept;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        kept += room;
        truncated = true;
        stop('output');
        return;
      }
      chunks.push(chunk);
      kept += chunk.length;
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);

    const timer = setTimeout(() => stop('time'), req.limits.timeLimitSeconds * 1000);
    let watching = false;
    const poll = req.watchdog
      ? setInterval(() => {
          if (watching || stopped) return;
          watching = true;
          req.watchdog!()
            .then((reason) => reason && stop('watchdog', reason))
            .catch(() => undefined)
            .finally(() => (watching = false));
        }, 500)
      : undefined;

    const finish = (exitCode: number | null, signal: string | null) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (poll) clearInterval(poll);
      kill(); // anything left in the group goes too
      const output = Buffer.concat(chunks).toString('utf8');
      const setupFailed = exitCode === SETUP_FAILED_EXIT && output.includes('sandbox setup failed');
      const outOfMemory = /\bMemoryError\b/.test(output) || (signal === 'SIGKILL' && !stopped && /Cannot allocate memory/.test(output));
      resolve({ output, exitCode, signal, stopped, stoppedDetail, truncated, outOfMemory, setupFailed, ms: Date.now() - started });
    };
    child.on('error', (err) => {
      chunks.push(Buffer.from(`could not start the runtime: ${err.message}\n`));
      finish(null, null);
    });
    child.on('close', (code, signal) => finish(code, signal));
  });
}

/**
 * Gives the sandbox user the workspace (service running as root): every entry is lchown'ed (links are never
 * followed) so code running as the unprivileged uid can write its files.
 */
export async function handOver(dir: string, uid: number, gid: number): Promise<void> {
  const walk = async (current: string, depth: number) => {
    await fs.lchown(current, uid, gid).catch(() => undefined);
    if (depth > 32) return;
    const entries = await fs.readdir(current, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const full = path.join(current, e.name);
      if (e.isDirectory()) await walk(full, depth + 1);
      else await fs.lchown(full, uid, gid).catch(() => undefined);
    }
  };
  await walk(dir, 0);
}
