import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Where this service may make one control group per jailed run, so memory, processes and CPU are bounded for the
 * whole run (every process of it together), not per process. cgroup v2 (one hierarchy) or v1 (a hierarchy per
 * controller: memory, pids, cpuacct).
 */
export type CgroupSupport =
  | { ok: true; version: 2; parent: string }
  | { ok: true; version: 1; memory: string; pids: string; cpuacct?: string }
  | { ok: false; reason: string };

const ROOT = '/sys/fs/cgroup';

/** The path of this process's own cgroup in a hierarchy (`0::/x` for v2, `4:memory:/x` for v1). */
function ownCgroup(controller: string | undefined): string | undefined {
  try {
    for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
      const [, controllers, where] = line.split(':');
      if (where === undefined) continue;
      if (controller === undefined ? controllers === '' : controllers!.split(',').includes(controller)) return where;
    }
  } catch {
    /* not Linux */
  }
  return undefined;
}

/** Makes `<base>/wabot-jail` (a test that it may create groups at all); returns it or the reason. */
function makeParent(base: string): string {
  const parent = path.join(base, 'wabot-jail');
  mkdirSync(parent, { recursive: true });
  const probe = path.join(parent, `probe-${process.pid}`);
  mkdirSync(probe);
  rmdirSync(probe);
  return parent;
}

/** Tries the service's own group first (works with delegation), then the hierarchy's root (works as root). */
function parentIn(mount: string, controller: string | undefined): string {
  const own = ownCgroup(controller);
  const bases = [...new Set([own && own !== '/' ? path.join(mount, own) : undefined, mount].filter((b): b is string => Boolean(b)))];
  let last: unknown;
  for (const base of bases) {
    try {
      return makeParent(base);
    } catch (err) {
      last = err;
    }
  }
  throw last instanceof Error ? last : new Error(`cannot create a group in ${mount}`);
}

/**
 * Finds out once whether runs can get a cgroup. Never throws: the reason goes to the start log.
 *
 * @example detectCgroups() // { ok: true, version: 1, memory: '/sys/fs/cgroup/memory/wabot-jail', ... }
 */
export function detectCgroups(root = ROOT): CgroupSupport {
  try {
    if (existsSync(path.join(root, 'cgroup.controllers'))) {
      const parent = parentIn(root, undefined);
      const available = readFileSync(path.join(parent, 'cgroup.controllers'), 'utf8').split(/\s+/);
      for (const c of ['memory', 'pids']) if (!available.includes(c)) throw new Error(`the ${c} controller is not delegated to ${parent}`);
      // Children of wabot-jail get memory and pids (a group with no processes of its own may delegate them).
      writeFileSync(path.join(parent, 'cgroup.subtree_control'), '+memory +pids');
      return { ok: true, version: 2, parent };
    }
    if (existsSync(path.join(root, 'memory', 'memory.limit_in_bytes')) || existsSync(path.join(root, 'memory'))) {
      const memory = parentIn(path.join(root, 'memory'), 'memory');
      const pids = parentIn(path.join(root, 'pids'), 'pids');
      let cpuacct: string | undefined;
      for (const mount of ['cpuacct', 'cpu,cpuacct']) {
        if (cpuacct || !existsSync(path.join(root, mount, 'cpuacct.usage'))) continue;
        try {
          cpuacct = parentIn(path.join(root, mount), 'cpuacct');
        } catch {
          /* CPU is then bounded per process only */
        }
      }
      return { ok: true, version: 1, memory, pids, cpuacct };
    }
    return { ok: false, reason: 'no cgroup file system at /sys/fs/cgroup' };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { ok: false, reason: `the service may not create cgroups (${e.code ?? e.message})` };
  }
}

/** One run's group(s): the files to enter it, what it used, and removal. */
export interface RunGroup {
  /** `cgroup.procs` files the launcher writes its pid into before anything untrusted starts. */
  procsFiles: string[];
  /** CPU time used by every process of the run, in seconds (undefined when not measurable). */
  cpuSeconds(): number | undefined;
  /** True once the kernel killed a process of the run for memory, or refused it memory. */
  hitMemoryLimit(): boolean;
  /** Kills every process still in the run (including ones that left the launcher's process group). */
  killAll(): void;
  /** Removes the group(s) (after every process has gone). */
  remove(): Promise<void>;
}

let counter = 0;

function write(file: string, value: string): void {
  writeFileSync(file, value);
}

function readNumber(file: string): number | undefined {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

async function removeDir(dir: string): Promise<void> {
  // A group empties a moment after its last process is reaped (EBUSY until then): retry briefly.
  for (let i = 0; i < 100; i++) {
    try {
      rmdirSync(dir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/**
 * Creates the group of one run with its limits: memory (no swap beyond it) and process count.
 *
 * @example const group = createRunGroup(support, { memoryBytes: 256 << 20, maxProcesses: 32 });
 */
export function createRunGroup(support: Extract<CgroupSupport, { ok: true }>, limits: { memoryBytes: number; maxProcesses: number }): RunGroup {
  const name = `run-${process.pid}-${++counter}-${Date.now().toString(36)}`;
  if (support.version === 2) {
    const dir = path.join(support.parent, name);
    mkdirSync(dir);
    write(path.join(dir, 'memory.max'), String(limits.memoryBytes));
    try {
      write(path.join(dir, 'memory.swap.max'), '0');
    } catch {
      /* no swap accounting: nothing to limit */
    }
    write(path.join(dir, 'pids.max'), String(limits.maxProcesses));
    const events = () => readFileSync(path.join(dir, 'memory.events'), 'utf8');
    return {
      procsFiles: [path.join(dir, 'cgroup.procs')],
      cpuSeconds: () => {
        try {
          const m = /usage_usec (\d+)/.exec(readFileSync(path.join(dir, 'cpu.stat'), 'utf8'));
          return m ? Number(m[1]) / 1e6 : undefined;
        } catch {
          return undefined;
        }
      },
      hitMemoryLimit: () => {
        try {
          return /^(oom_kill|max) [1-9]/m.test(events());
        } catch {
          return false;
        }
      },
      killAll: () => {
        try {
          write(path.join(dir, 'cgroup.kill'), '1');
        } catch {
          killListed(path.join(dir, 'cgroup.procs'));
        }
      },
      remove: () => removeDir(dir),
    };
  }
  const memory = path.join(support.memory, name);
  const pids = path.join(support.pids, name);
  const cpu = support.cpuacct ? path.join(support.cpuacct, name) : undefined;
  mkdirSync(memory);
  mkdirSync(pids);
  if (cpu) mkdirSync(cpu);
  write(path.join(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
  try {
    write(path.join(memory, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
  } catch {
    /* no swap accounting */
  }
  write(path.join(pids, 'pids.max'), String(limits.maxProcesses));
  return {
    procsFiles: [memory, pids, ...(cpu ? [cpu] : [])].map((d) => path.join(d, 'cgroup.procs')),
    cpuSeconds: () => {
      const ns = cpu ? readNumber(path.join(cpu, 'cpuacct.usage')) : undefined;
      return ns === undefined ? undefined : ns / 1e9;
    },
    hitMemoryLimit: () => {
      // Kernels since 4.13 count OOM kills; older ones only say the limit was hit.
      const control = safeRead(path.join(memory, 'memory.oom_control'));
      if (/oom_kill \d/.test(control)) return /oom_kill [1-9]|under_oom 1/.test(control);
      return (readNumber(path.join(memory, 'memory.failcnt')) ?? 0) > 0;
    },
    killAll: () => killListed(path.join(pids, 'cgroup.procs')),
    remove: async () => {
      for (const dir of [memory, pids, ...(cpu ? [cpu] : [])]) await removeDir(dir);
    },
  };
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** SIGKILLs every pid listed in a cgroup.procs file (cgroup v1, or v2 before 5.14 without cgroup.kill). */
function killListed(procs: string): void {
  for (const pid of safeRead(procs).split('\n').map(Number).filter((n) => n > 0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}
