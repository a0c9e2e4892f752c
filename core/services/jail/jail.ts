import { spawn, type StdioOptions } from 'node:child_process';
import { accessSync, existsSync, constants as fsConstants, promises as fs, realpathSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { createRunGroup, type RunGroup } from './cgroup.js';
import { bwrapOptions, INSIDE } from './mounts.js';
import type { EgressPolicy, EgressProxy } from './egress-proxy.js';
import { detectJailSupport, dropArgs, type JailSupport } from './support.js';
import { packWorkTree, receiveWorkTree, type ReceivedWork, type WorkQuota } from './work-tree.js';
import { JailRefused } from '../../api/errors.js';

/** Limits of one run; every one bounds the whole run (all its processes together) where the machine allows. */
export interface JailLimits {
  wallSeconds: number;
  /** CPU seconds of all processes together (cgroup), and of each process (RLIMIT_CPU). */
  cpuSeconds: number;
  /** Memory of the run (cgroup); per process only where no cgroup may be made. */
  memoryMb: number;
  /** Also cap each process's address space (python then gets a MemoryError instead of being killed). */
  processMemoryMb?: number;
  /** Processes and threads of the run. */
  maxProcesses: number;
  /** stdout + stderr together; the run is stopped as soon as there is more. */
  maxOutputBytes: number;
  /** What the run may write to /out, bytes. */
  diskBytes: number;
  /** Size of the private /tmp (memory-backed, counted in the run's memory), bytes; default 16 MB. */
  tmpBytes?: number;
  /** Largest single file it may write (RLIMIT_FSIZE); default diskBytes. */
  maxFileBytes?: number;
}

/** One job for the jail. Paths the program gets are relative (`in/x`, `out/y`) or absolute inside (`/work/x`). */
export interface JailJob {
  /**
   * `code`: untrusted code (refused when bubblewrap cannot run). `media`: a trusted program reading untrusted bytes
   * (without bubblewrap it still runs, with every other defence).
   */
  kind: 'code' | 'media';
  /** Host path of the program. */
  program: string;
  args: string[];
  /** Files shown read-only at `in/<name>`: a host path (copied) or bytes. */
  inputs?: Record<string, string | Buffer>;
  /** Host folder that receives the regular files the program wrote to `out/`. */
  outputTo?: string;
  /** A workspace copied onto a size-limited tmpfs at /work; copied back only when the result fits `quota`. */
  work?: { dir: string; quota: WorkQuota };
  /** `egress`: the only way out is the egress proxy (every destination checked). Default: no network. */
  network?: 'none' | 'egress';
  /** Which destinations the egress proxy lets through (required with `network: 'egress'`). */
  egress?: EgressPolicy;
  /** Other programs the job calls by the path `jail.pathInside(tool)` gives (e.g. yt-dlp's ffmpeg). */
  tools?: string[];
  /**
   * Trusted files and folders a program needs besides /usr (a script and the libraries it imports), shown read-only
   * at `/opt/jail/lib/<name>`; `name` is a relative path (`read.mjs`, `node_modules/fflate`). Jailed jobs only.
   */
  libraries?: Record<string, string>;
  /** Extra environment (the run starts from an empty one). */
  env?: Record<string, string>;
  limits: JailLimits;
  /** Every complete output line, e.g. to read progress. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  signal?: AbortSignal;
}

export interface JailResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  /** The last 20 000 characters of stderr. */
  stderr: string;
  /** stdout and stderr interleaved as they came (capped), for a user-facing transcript. */
  output: string;
  /** Why the run was stopped from outside. */
  stopped?: 'time' | 'cpu' | 'output' | 'disk' | 'aborted';
  truncated: boolean;
  /** The kernel refused or killed for memory (cgroup). */
  outOfMemory: boolean;
  /** The jail could not be set up (nothing of the job ran). */
  setupFailed?: string;
  /** Ran inside bubblewrap. */
  jailed: boolean;
  /** Names of the files moved to `outputTo`. */
  outputs: string[];
  /** Destinations the egress proxy refused (`host:port — reason`). */
  refused?: string[];
  /** For work jobs: what came back (`fits: false` means the workspace is unchanged). Undefined when stopped. */
  work?: { fits: true; bytes: number; entries: number; skipped: string[] } | { fits: false; reason: string; added: string[] };
  ms: number;
}

export interface JailOptions {
  /** The uid/gid jailed programs run as when the service is root (default 65534, "nobody"). */
  uid?: number;
  gid?: number;
  /** Where each run's scratch folder is made (default the system temp folder; never inside the data folder). */
  scratchRoot?: string;
  /** Skip detection (tests). */
  support?: JailSupport;
}

/** Exit code of the jail's own set-up steps (cgroup entry, unpacking the workspace). */
const SETUP_FAILED = 125;

/**
 * Joins the run's cgroup(s) before anything else runs, so every later process (all forks) is counted. It writes
 * its own pid into each `cgroup.procs`, then execs the rest of the chain.
 */
const ENTER_CGROUP = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || { echo "jail setup failed: cannot enter the cgroup" >&2; exit 125; }; shift; n=$((n-1)); done; exec "$@"';

/**
 * Runs inside the jail for workspace jobs: unpacks the workspace (stdin) onto the tmpfs, runs the program without
 * stdin and without the result pipe, stops whatever it left running, and writes /work as tar to fd 4.
 */
const WORK_WRAPPER = [
  'tar -C /work -xf - --no-same-owner --no-same-permissions 2>/dev/null || { echo "jail setup failed: the work folder could not be unpacked" >&2; exit 125; }',
  '"$@" </dev/null 4>&-',
  'rc=$?',
  'kill -9 -1 2>/dev/null',
  'cd / && tar -C /work -cf - --format=gnu . >&4 2>/dev/null',
  'exit $rc',
].join('\n');

function signalName(code: number): string | null {
  const entry = Object.entries(os.constants.signals).find(([, n]) => n === code);
  return entry ? entry[0] : null;
}

function prlimitArgs(limits: JailLimits, totalBound: boolean): string[] {
  const mb = 1024 * 1024;
  const asMb = limits.processMemoryMb ?? (totalBound ? undefined : limits.memoryMb);
  return [
    '/usr/bin/prlimit',
    `--cpu=${limits.cpuSeconds}`,
    `--fsize=${limits.maxFileBytes ?? limits.diskBytes}`,
    '--core=0',
    '--nofile=256',
    ...(asMb ? [`--as=${asMb * mb}`] : []),
    // Without a cgroup the process count is per uid (RLIMIT_NPROC): the only bound left.
    ...(totalBound ? [] : [`--nproc=${limits.maxProcesses}`]),
    '--',
  ];
}

/** Size of the regular files directly in a folder (the jail's /out). */
async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (entry.isFile()) total += (await fs.lstat(path.join(dir, entry.name)).catch(() => undefined))?.size ?? 0;
  }
  return total;
}

/** A program named without a folder (`yt-dlp`), found on the service's PATH; paths are returned as they are. */
function onPath(program: string): string {
  if (program.includes('/')) return program;
  for (const dir of (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(':').filter(Boolean)) {
    const candidate = path.join(dir, program);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      /* next */
    }
  }
  const err = new Error(`${program} not found`) as NodeJS.ErrnoException;
  err.code = 'ENOENT';
  throw err;
}

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$/;
/** One part of a library's name inside the jail (`node_modules`, `@xmldom`, `read.mjs`). */
const SAFE_LIBRARY_PART = /^@?[A-Za-z0-9][A-Za-z0-9._-]{0,100}$/;

/** Makes a copied tree readable by anyone (folders enterable), so the jail's uid can load it. */
async function chmodReadable(target: string): Promise<void> {
  const info = await fs.lstat(target);
  if (info.isDirectory()) {
    await fs.chmod(target, 0o755);
    for (const entry of await fs.readdir(target)) await chmodReadable(path.join(target, entry));
  } else if (info.isFile()) await fs.chmod(target, (info.mode & 0o111 ? 0o755 : 0o644));
}

/** Per scratch root: the folder of the readable copies, removed when the process exits. */
const toolDirs = new Map<string, Promise<string>>();
const toolDirMade = new Map<string, string>();
/**
 * The readable copies of trusted programs and libraries, shared by every Jail of the process (they are read-only to
 * the jail): the document reader's packages are ~1,500 files, and copying them took seconds for each new Jail.
 */
const copies = new Map<string, Promise<string>>();

function toolsDir(root: string): Promise<string> {
  let dir = toolDirs.get(root);
  if (!dir || (toolDirMade.has(root) && !existsSync(toolDirMade.get(root)!))) {
    dir = (async () => {
      const made = await fs.mkdtemp(path.join(root, 'jail-tools-'));
      toolDirMade.set(root, made);
      await fs.chmod(made, 0o755);
      process.once('exit', () => rmSync(made, { recursive: true, force: true }));
      return made;
    })();
    dir.catch(() => toolDirs.delete(root));
    toolDirs.set(root, dir);
  }
  return dir;
}

/** The copy `make` writes into a fresh folder under `root`'s tools folder, made once per `key` (again if it was removed). */
async function readableCopy(root: string, key: string, make: (dir: string) => Promise<string>): Promise<string> {
  const id = `${root}|${key}`;
  const known = copies.get(id);
  if (known) {
    const target = await known.catch(() => undefined);
    if (target && existsSync(target)) return target;
    // Removed under us (its folder deleted): made again.
    if (copies.get(id) === known) copies.delete(id);
    return readableCopy(root, key, make);
  }
  const copy = (async () => {
    const dir = await fs.mkdtemp(path.join(await toolsDir(root), 'copy-'));
    await fs.chmod(dir, 0o755);
    return make(dir);
  })();
  copy.catch(() => copies.delete(id));
  copies.set(id, copy);
  return copy;
}

/**
 * The one isolation boundary of the bot: every helper program that touches bytes or code from a chat runs here —
 * ffmpeg, yt-dlp, python. Inside bubblewrap it sees only /usr and its own /in, /out, /work, as an unprivileged uid,
 * without network, unable to make user namespaces, with one cgroup bounding memory, processes and CPU of the whole
 * run. Where bubblewrap cannot run, code is refused and media still runs with every other limit.
 *
 * @example
 * const result = await jail.run({ kind: 'media', program: '/usr/bin/ffmpeg', args: ['-i', 'in/a', 'out/b.ogg'], inputs: { a: file }, outputTo: dir, limits });
 */
export class Jail {
  private detected: JailSupport | undefined;
  private detecting: Promise<JailSupport> | undefined;

  constructor(private readonly options: JailOptions = {}) {
    this.detected = options.support;
  }

  /** Finds out once what this machine allows (bubblewrap, cgroups, uid); the start log shows it. */
  detect(): Promise<JailSupport> {
    if (this.detected) return Promise.resolve(this.detected);
    this.detecting ??= detectJailSupport({ uid: this.options.uid ?? 65534, gid: this.options.gid ?? 65534 }).then((s) => (this.detected = s));
    return this.detecting;
  }

  /** What was detected (undefined before `detect` finished). */
  get support(): JailSupport | undefined {
    return this.detected;
  }

  /** Why code cannot run, for the user (undefined when it can or before detection). */
  get codeRefusal(): string | undefined {
    return this.detected && !this.detected.bwrap.ok ? this.detected.bwrap.reason : undefined;
  }

  /** A copy of `program` the jail's uid may read (made once per program version, removed when the service exits). */
  private readableCopy(program: string): Promise<string> {
    const stat = statSync(program);
    return readableCopy(this.options.scratchRoot ?? os.tmpdir(), `bin|${program}|${stat.size}|${stat.mtimeMs}`, async (dir) => {
      const target = path.join(dir, path.basename(program));
      await fs.copyFile(program, target, fsConstants.COPYFILE_FICLONE);
      await fs.chmod(target, 0o755);
      return target;
    });
  }

  /** A copy of a library file or folder the jail's uid may read (made once per path, removed when the service exits). */
  private readableTree(source: string): Promise<string> {
    return readableCopy(this.options.scratchRoot ?? os.tmpdir(), `lib|${source}`, async (dir) => {
      const target = path.join(dir, path.basename(source));
      await fs.cp(source, target, { recursive: true, dereference: true });
      await chmodReadable(target);
      return target;
    });
  }

  /** Where a program is found inside the jail: its own path under /usr, else /opt/jail/bin/<name>. */
  pathInside(program: string): string {
    const real = realpathSync(onPath(program));
    return real.startsWith('/usr/') || !this.detected?.bwrap.ok ? real : `${INSIDE.bin}/${path.basename(real)}`;
  }

  async run(job: JailJob): Promise<JailResult> {
    const support = await this.detect();
    return this.runWith(support, job);
  }

  private async runWith(support: JailSupport, job: JailJob): Promise<JailResult> {
    const jailed = support.bwrap.ok;
    if (job.kind === 'code' && !jailed) throw new JailRefused(`the jail does not work on this server (${support.bwrap.ok ? "" : support.bwrap.reason}), and running code without it would expose the server`);
    if (job.work && !jailed) throw new JailRefused('a job with a work folder needs the jail');
    if (job.libraries && !jailed) throw new JailRefused('a job with libraries needs the jail');
    for (const name of Object.keys(job.libraries ?? {})) {
      if (!name.split('/').every((part) => SAFE_LIBRARY_PART.test(part))) throw new Error(`bad jail library name ${name}`);
    }
    const started = Date.now();
    const scratch = await fs.mkdtemp(path.join(this.options.scratchRoot ?? os.tmpdir(), 'jail-'));
    let group: RunGroup | undefined;
    let egress: EgressProxy | undefined;
    let forwarder = '';
    try {
      await fs.chmod(scratch, 0o711);
      const inDir = path.join(scratch, 'in');
      const outDir = path.join(scratch, 'out');
      await fs.mkdir(inDir, { mode: 0o755 });
      await fs.mkdir(outDir, { mode: 0o700 });
      if (support.dropsRoot) await fs.chown(outDir, support.uid, support.gid);
      for (const [name, source] of Object.entries(job.inputs ?? {})) {
        if (!SAFE_NAME.test(name)) throw new Error(`bad jail input name ${name}`);
        const target = path.join(inDir, name);
        if (typeof source === 'string') await fs.copyFile(source, target, fsConstants.COPYFILE_FICLONE);
        else await fs.writeFile(target, source);
        await fs.chmod(target, 0o644);
      }
      const tmpBytes = job.limits.tmpBytes ?? 16 * 1024 * 1024;
      const cgroup = support.cgroup;
      if (cgroup.ok) {
        // tmpfs pages are charged to the run: its memory covers the program plus full /tmp and /work.
        const memoryMb = job.limits.memoryMb + (job.work ? Math.ceil(job.work.quota.bytes / 1024 / 1024) + 1 : 0) + Math.ceil(tmpBytes / 1024 / 1024);
        group = createRunGroup(cgroup, { memoryBytes: memoryMb * 1024 * 1024, maxProcesses: job.limits.maxProcesses });
      }
      const egressSocket = path.join(scratch, 'egress.sock');
      if (job.network === 'egress') {
        if (!job.egress) throw new JailRefused('a job with network needs an egress policy');
        // Loaded with the first job that may reach the network (a download, a link read): most starts run none.
        const proxy = await import('./egress-proxy.js');
        forwarder = proxy.FORWARDER;
        egress = await proxy.openEgressProxy(egressSocket, job.egress);
        // The jail's uid must be able to connect to the socket.
        await fs.chmod(egressSocket, 0o777);
      }

      // Programs outside /usr (the bundled ffmpeg in node_modules) may sit in folders the jail's uid cannot enter:
      // they are shown from a copy in a folder the jail may read, at /opt/jail/bin/<name>.
      const programs = [job.program, ...(job.tools ?? [])].map((p) => realpathSync(onPath(p)));
      const program = programs[0]!;
      const outsideUsr = jailed ? await Promise.all(programs.filter((p) => !p.startsWith('/usr/')).map(async (p) => ({ host: await this.readableCopy(p), inside: `${INSIDE.bin}/${path.basename(p)}` }))) : [];
      // Libraries are shown from the service's own files, or from a readable copy when the jail's uid is another.
      const libraries = await Promise.all(
        Object.entries(job.libraries ?? {}).map(async ([name, host]) => ({ host: support.dropsRoot ? await this.readableTree(host) : host, inside: `${INSIDE.lib}/${name}` })),
      );
      const env: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', HOME: job.work ? INSIDE.work : INSIDE.tmp, ...(job.env ?? {}) };
      let inner: string[];
      let bwrapArgs: string[] = [];
      if (jailed) {
        inner = [this.pathInside(program), ...job.args];
        if (egress) {
          inner = ['/usr/bin/python3', '-I', '-S', '-c', forwarder, ...inner];
          env.EGRESS_SOCKET = INSIDE.egress;
        }
        if (job.work) inner = ['/bin/sh', '-c', WORK_WRAPPER, 'jail-work', ...inner];
        bwrapArgs = bwrapOptions({
          inDir: job.inputs ? inDir : undefined,
          outDir: job.outputTo ? outDir : undefined,
          workBytes: job.work ? job.work.quota.bytes + 256 * 1024 + job.work.quota.entries * 4096 : undefined,
          tmpBytes,
          programsOutsideUsr: [...outsideUsr, ...libraries],
          egressSocket: egress ? egressSocket : undefined,
          env,
          cwd: job.work ? INSIDE.work : '/',
        });
      } else {
        inner = [program, ...job.args.map((a) => a.replace(/^\/opt\/jail\/bin\//, ''))];
        if (egress) {
          inner = ['/usr/bin/python3', '-I', '-S', '-c', forwarder, ...inner];
          env.EGRESS_SOCKET = egressSocket;
        }
      }
      const chain = [
        ...(group ? ['/bin/sh', '-c', ENTER_CGROUP, 'jail-enter', String(group.procsFiles.length), ...group.procsFiles] : []),
        ...prlimitArgs(job.limits, Boolean(group)),
        ...dropArgs(support),
        ...(jailed ? ['/usr/bin/bwrap', '--args', '3', '--'] : []),
        ...inner,
      ];
      const stdio: StdioOptions = [job.work ? 'pipe' : 'ignore', 'pipe', 'pipe', jailed ? 'pipe' : 'ignore', job.work ? 'pipe' : 'ignore'];
      const cwd = jailed ? '/' : scratch;
      const result = await this.supervise(support, { ...job, env: jailed ? job.env : { ...env } }, chain, stdio, cwd, bwrapArgs, group, outDir);
      if (egress) result.refused = [...egress.refused];
      result.jailed = jailed;
      result.ms = Date.now() - started;
      if (job.outputTo && !result.stopped && !result.setupFailed) {
        for (const entry of await fs.readdir(outDir, { withFileTypes: true })) {
          if (!entry.isFile()) continue;
          await fs.copyFile(path.join(outDir, entry.name), path.join(job.outputTo, entry.name), fsConstants.COPYFILE_FICLONE);
          result.outputs.push(entry.name);
        }
      }
      return result;
    } finally {
      if (group) await group.remove();
      if (egress) await egress.close();
      await fs.rm(scratch, { recursive: true, force: true });
    }
  }

  private supervise(support: JailSupport, job: JailJob, chain: string[], stdio: StdioOptions, cwd: string, bwrapArgs: string[], group: RunGroup | undefined, outDir: string): Promise<JailResult> {
    const [command, ...args] = chain;
    // Only PATH reaches the launcher; inside bubblewrap --clearenv starts from nothing. No service variable leaks.
    const env: NodeJS.ProcessEnv = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' };
    if (!support.bwrap.ok) Object.assign(env, { HOME: cwd, TMPDIR: cwd }, job.env ?? {});
    return new Promise<JailResult>((resolve) => {
      const child = spawn(command!, args, { cwd, env, stdio, detached: true });
      const limits = job.limits;
      let stdout = '';
      let stderr = '';
      let output = '';
      let kept = 0;
      let truncated = false;
      let stopped: JailResult['stopped'];
      let finished = false;
      const partial = { stdout: '', stderr: '' };

      const killEverything = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
        group?.killAll();
      };
      const stop = (why: NonNullable<JailResult['stopped']>) => {
        if (stopped || finished) return;
        stopped = why;
        killEverything();
      };
      const take = (stream: 'stdout' | 'stderr', chunk: Buffer) => {
        // The cap is exceeded by the first byte beyond it, whatever the chunk sizes.
        let part = chunk;
        if (kept + chunk.length > limits.maxOutputBytes) {
          part = chunk.subarray(0, Math.max(0, limits.maxOutputBytes - kept));
          truncated = true;
        }
        kept += part.length;
        const text = part.toString('utf8');
        output += text;
        if (stream === 'stdout') stdout += text;
        else stderr = (stderr + text).slice(-20_000);
        if (job.onLine) {
          const lines = (partial[stream] + text).split(/\r\n|\r|\n/);
          partial[stream] = lines.pop() ?? '';
          for (const line of lines) if (line.trim()) job.onLine(line, stream);
        }
        if (truncated) stop('output');
      };
      child.stdout!.on('data', (c: Buffer) => take('stdout', c));
      child.stderr!.on('data', (c: Buffer) => take('stderr', c));
      if (child.stdio[3]) (child.stdio[3] as Writable).end(Buffer.from(bwrapArgs.map((a) => `${a}\0`).join('')));

      let received: Promise<ReceivedWork> | undefined;
      if (job.work) {
        const stdin = child.stdin!;
        stdin.on('error', () => undefined);
        packWorkTree(job.work.dir).then((tar) => tar.pipe(stdin), () => stdin.end());
        received = receiveWorkTree(child.stdio[4] as Readable, job.work.dir, job.work.quota);
      }

      const timer = setTimeout(() => stop('time'), limits.wallSeconds * 1000);
      const onAbort = () => stop('aborted');
      job.signal?.addEventListener('abort', onAbort, { once: true });
      if (job.signal?.aborted) stop('aborted');
      let polling = false;
      const poll = setInterval(() => {
        if (polling || stopped) return;
        polling = true;
        const cpu = group?.cpuSeconds();
        if (cpu !== undefined && cpu > limits.cpuSeconds) stop('cpu');
        folderBytes(outDir)
          .then((bytes) => bytes > limits.diskBytes && stop('disk'))
          .finally(() => (polling = false));
      }, 250);

      const finish = async (code: number | null, sig: NodeJS.Signals | null) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        clearInterval(poll);
        job.signal?.removeEventListener('abort', onAbort);
        killEverything(); // anything left goes too
        for (const stream of ['stdout', 'stderr'] as const) if (partial[stream].trim()) job.onLine?.(partial[stream], stream);
        let exitCode = code;
        let signal: string | null = sig;
        const setupFailed = code === SETUP_FAILED && /jail setup failed: ([^\n]*)/.exec(stderr)?.[1];
        // The workspace wrapper reports the program's death by signal as 128 + n, like a shell.
        if (job.work && code !== null && code > 128 && code < 160) {
          signal = signalName(code - 128);
          exitCode = null;
        }
        const result: JailResult = {
          exitCode, signal, stdout, stderr, output, stopped, truncated,
          outOfMemory: group?.hitMemoryLimit() ?? false,
          setupFailed: setupFailed || undefined,
          jailed: false, outputs: [], ms: 0,
        };
        if (received) {
          const work = await received.catch((err: Error) => ({ fits: false as const, reason: err.message, added: [] }));
          if (stopped || setupFailed) {
            if (work.fits) await work.discard();
          } else if (work.fits) {
            await work.commit();
            result.work = { fits: true, bytes: work.bytes, entries: work.entries, skipped: work.skipped };
          } else result.work = work;
        }
        resolve(result);
      };
      child.on('error', (err) => {
        stderr += `could not start: ${err.message}\n`;
        output += `could not start: ${err.message}\n`;
        void finish(null, null);
      });
      child.on('close', (code, sig) => void finish(code, sig));
    });
  }
}
