import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { detectCgroups } from '../../core/services/jail/cgroup.js';

const LIMIT_MB = 48;
const ASKED_MB = 128;

/**
 * Why this machine's kernel cannot hold a process to a cgroup's memory limit, or undefined when it can. Checked
 * apart from the jail's own code (a group made and limited here, a process put in it by hand), so a fault of the jail
 * fails its tests instead of skipping them: a process asks for 128 MB in a group limited to 48 MB (swap bounded too
 * where the kernel accounts it) and must not get it. Kernels differ here: cgroup v1 without swap accounting lets a
 * group swap past its limit, and some sandboxed kernels show the files without enforcing them.
 */
export async function memoryLimitNotEnforced(): Promise<string | undefined> {
  const support = detectCgroups();
  if (!support.ok) return `no cgroup can be made for a run (${support.reason})`;
  const v2 = support.version === 2;
  const dir = path.join(v2 ? support.parent : support.memory, `memory-probe-${process.pid}-${Date.now().toString(36)}`);
  mkdirSync(dir);
  try {
    writeFileSync(path.join(dir, v2 ? 'memory.max' : 'memory.limit_in_bytes'), String(LIMIT_MB << 20));
    const swapFile = path.join(dir, v2 ? 'memory.swap.max' : 'memory.memsw.limit_in_bytes');
    const swapBounded = existsSync(swapFile);
    if (swapBounded) writeFileSync(swapFile, v2 ? '0' : String(LIMIT_MB << 20));
    const held = await heldInGroup(path.join(dir, 'cgroup.procs'));
    if (!held) return undefined;
    return `the kernel let a process hold ${ASKED_MB} MB in a cgroup v${support.version} group limited to ${LIMIT_MB} MB${swapBounded ? '' : ' (no swap accounting: the group may swap past its limit)'}`;
  } finally {
    await removeGroup(dir);
  }
}

/** Runs a process that enters the group (its `cgroup.procs`) and then fills 128 MB; true when it held them. */
function heldInGroup(procs: string): Promise<boolean> {
  const fill = `b = b'm' * (${ASKED_MB} << 20); print('HELD', len(b))`;
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', 'echo $$ > "$1" || exit 125; exec python3 -c "$2"', 'probe', procs, fill], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    // A safety net for a machine that swaps the probe slowly: not a timing of the check (its answer is the exit).
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 125) reject(new Error(`the memory probe could not enter its cgroup: ${err.trim()}`));
      else resolve(out.includes('HELD'));
    });
  });
}

async function removeGroup(dir: string): Promise<void> {
  // A group empties a moment after its last process is reaped (EBUSY until then): tried again on later turns.
  for (let i = 0; i < 5000; i++) {
    try {
      rmdirSync(dir);
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
