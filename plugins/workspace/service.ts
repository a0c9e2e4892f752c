import type { PluginHost, Static } from '../../core/index.js';
import { BadFileName, checkFileName } from './file-names.js';
import { FileRefused, WorkspaceFiles, kb, openInside } from './files.js';
import { Locks } from './locks.js';
import { withEnvSettings, type WorkspaceOptions, type workspaceOptions } from './options.js';
import { pythonRuntime, systemPython, type Runtime } from './python-runtime.js';
import { runPython, type RunResult } from './sandbox.js';
import { WorkspaceStore, type WorkspaceMeta } from './store.js';
import { checkUsername } from './usernames.js';

export type { Runtime } from './python-runtime.js';

/** Deepest folder level a run may leave (the listing and the quota see every level up to it). */
const MAX_DEPTH = 32;

/** A name made by code, safe to show: control and bidirectional characters are shown as escapes. */
function shownName(name: string): string {
  return JSON.stringify(name).slice(1, -1).replace(/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Longest run output put into a chat reply (the full capped output goes to the model). */
const CHAT_OUTPUT_CHARS = 3000;

/** The host the workspace plugin gets: its options typed from the schema. */
export type WorkspaceHost = PluginHost<Static<typeof workspaceOptions>>;

/**
 * The workspace feature's logic, shared by the `/ws` commands, the model's tools and the site server:
 * who owns which workspace, file access within limits, sandboxed runs and site usernames.
 *
 * @example
 * const service = new WorkspaceService(host);
 * await service.start();
 * const text = await service.run(meta, 'main.py');
 */
export class WorkspaceService {
  readonly store: WorkspaceStore;
  readonly locks: Locks;
  private pythonPath: string | undefined;

  /**
   * `started`: the store and python the plugin's start already loaded and found (then `start()` is not called): the
   * service is made with the first /ws, not at start.
   */
  constructor(
    readonly host: WorkspaceHost,
    started?: { store: WorkspaceStore; pythonPath: string | undefined },
  ) {
    this.store = started?.store ?? new WorkspaceStore(host.store, host.files.folder('workspaces'));
    this.pythonPath = started?.pythonPath;
    this.locks = new Locks(() => this.options().maxConcurrentRuns);
  }

  async start(): Promise<void> {
    await this.store.load();
    this.pythonPath = systemPython();
  }

  options(): WorkspaceOptions {
    return withEnvSettings(this.host.options(), (name) => this.host.setting(name));
  }

  /** Whether python code can run now, and the reason when not. */
  runtime(): Runtime {
    return pythonRuntime(this.host.capabilities, this.pythonPath, this.options());
  }

  /** The owner key of a sender (links phone id and LID in users.json). */
  ownerOf(senderId: string, senderAltId?: string): string | undefined {
    return this.store.ownerOf(senderId, senderAltId);
  }

  /** The sender's workspace if it is open in this chat (no writes: safe in a routing predicate). */
  openWorkspace(senderId: string, senderAltId: string | undefined, chatId: string): WorkspaceMeta | undefined {
    return this.store.openFor(senderId, senderAltId, chatId, this.options().idleMinutes * 60_000);
  }

  files(meta: WorkspaceMeta): WorkspaceFiles {
    const o = this.options();
    return new WorkspaceFiles(this.store.dirOf(meta), { maxFileBytes: o.maxFileKb * 1024, quotaBytes: o.quotaMb * 1024 * 1024, maxFiles: o.maxFiles });
  }

  /** The public address of the workspace's site, when it has a username and hosting is on. */
  siteAddress(meta: WorkspaceMeta): string | undefined {
    const base = this.host.settings.publicBaseUrl;
    return base && meta.username ? `${base}/${meta.username}/` : undefined;
  }

  /** `/ws name`: claims a username. Returns the reply text. */
  async claimUsername(meta: WorkspaceMeta, raw: string): Promise<string> {
    const checked = checkUsername(raw);
    if (!checked.ok) return checked.reason;
    if (meta.username === checked.name) return this.siteLine(meta, `Your site name already is *${checked.name}*.`);
    if (!(await this.store.claimUsername(meta, checked.name))) return `The name "${checked.name}" is taken. Please pick another one.`;
    return this.siteLine(meta, `Your site name is now *${checked.name}*.`);
  }

  /** Describes where the site is (or why it is not online). */
  siteLine(meta: WorkspaceMeta, lead = ''): string {
    const prefix = lead ? `${lead} ` : '';
    if (!meta.username) return `${prefix}No site yet: claim a name with /ws name <username>, then put an index.html in your workspace.`;
    const address = this.siteAddress(meta);
    if (!address) return `${prefix}Site hosting is off on this bot (the owner has not set PUBLIC_BASE_URL), so the site has no public address yet.`;
    return `${prefix}Your site (index.html and its files) is at ${address}`;
  }

  /** The model's "publish" tool: tells the address, or what is missing. */
  async publish(meta: WorkspaceMeta, username?: string): Promise<string> {
    if (!this.host.settings.publicBaseUrl) return 'Site hosting is off on this bot: the owner has not set PUBLIC_BASE_URL. The files stay in the workspace.';
    if (username) {
      const checked = checkUsername(username);
      if (!checked.ok) return checked.reason;
      if (meta.username !== checked.name) {
        const reply = await this.claimUsername(meta, checked.name);
        if (meta.username !== checked.name) return reply;
      }
    }
    if (!meta.username) return 'The site has no username yet. Ask the user to pick one (3–30 lowercase letters, digits, dashes), then call this tool with it, or the user can type /ws name <username>.';
    const index = await openInside(this.store.dirOf(meta), 'index.html').then((h) => h.close().then(() => true), () => false);
    const address = this.siteAddress(meta)!;
    return index ? `Published: ${address}` : `The site address is ${address}, but there is no index.html yet: write one first.`;
  }

  /**
   * Runs a python script of the workspace in the sandbox and returns the text for the user (and the model).
   * Checks the runtime, the file, the quota; afterwards removes links and special files the code made and, when
   * the run went over the quota, the new files it wrote.
   */
  async run(meta: WorkspaceMeta, rawName: string): Promise<string> {
    const runtime = this.runtime();
    if (!runtime.ok) return runtime.reason;
    let name: string;
    try {
      name = checkFileName(rawName);
    } catch (err) {
      return `I cannot run that: ${(err as Error).message}.`;
    }
    if (!name.endsWith('.py')) return `I only run python scripts (.py files); ${name} is not one.`;
    const files = this.files(meta);
    const o = this.options();
    const quota = o.quotaMb * 1024 * 1024;
    return this.locks.run(meta.id, async () => {
      try {
        await (await openInside(files.dir, name)).close();
      } catch (err) {
        if (err instanceof FileRefused) return `I cannot run ${name}: ${err.message}. Your files: /ws files`;
        throw err;
      }
      const before = await files.usage();
      if (before.bytes >= quota) return `Your workspace is full (${kb(before.bytes)} of ${kb(quota)}): delete some files before running code.`;
      this.host.log.info({ workspace: meta.id, script: name, sandboxed: runtime.sandboxed }, 'running a workspace script');
      const { result, notes } = runtime.sandboxed ? await this.runJailed(files, name, runtime.python, o) : await this.runUnjailed(files, name, runtime.python, o, before.bytes);
      this.host.log.info({ workspace: meta.id, script: name, exitCode: result.exitCode, signal: result.signal, stopped: result.stopped, ms: result.ms }, 'workspace script finished');
      return formatRun(name, result, o, runtime.sandboxed, notes);
    });
  }

  /**
   * A run in the core jail: the workspace is copied onto a tmpfs of the quota's size at /work, and the result is
   * copied back only when it fits the quota in bytes, entries and depth; otherwise none of it is kept.
   */
  private async runJailed(files: WorkspaceFiles, name: string, python: string, o: WorkspaceOptions): Promise<{ result: RunResult; notes: string[] }> {
    const quota = o.quotaMb * 1024 * 1024;
    const jailed = await this.host.jail.run({
      kind: 'code',
      program: python,
      args: ['-E', '-s', '-B', '-u', '--', `/work/${name}`],
      env: { PYTHONIOENCODING: 'utf-8' },
      work: { dir: files.dir, quota: { bytes: quota, entries: o.maxFiles, depth: MAX_DEPTH } },
      limits: {
        wallSeconds: o.timeLimitSeconds,
        cpuSeconds: o.cpuSeconds,
        memoryMb: o.memoryMb,
        processMemoryMb: o.memoryMb,
        maxProcesses: o.maxProcesses,
        maxOutputBytes: o.maxOutputBytes,
        diskBytes: 0,
        tmpBytes: o.tmpMb * 1024 * 1024,
        maxFileBytes: quota,
      },
    });
    const notes: string[] = [];
    const work = jailed.work;
    if (jailed.stopped) notes.push('The run was stopped, so the changes it made to your files were not kept.');
    else if (work?.fits && work.skipped.length) notes.push(`Removed ${work.skipped.length} link(s)/special file(s) the script made (only regular files are kept): ${work.skipped.slice(0, 5).map(shownName).join(', ')}`);
    else if (work && !work.fits) {
      notes.push(`The run left the workspace over its limits (${work.reason}; quota ${kb(quota)}, ${o.maxFiles} entries, ${MAX_DEPTH} folder levels), so none of its changes were kept: the new file(s) it wrote were deleted.`);
    }
    const result: RunResult = {
      output: jailed.output,
      exitCode: jailed.exitCode,
      signal: jailed.signal,
      stopped: jailed.stopped === 'aborted' ? 'time' : jailed.stopped,
      truncated: jailed.truncated,
      outOfMemory: jailed.outOfMemory || /\bMemoryError\b/.test(jailed.output),
      setupFailed: Boolean(jailed.setupFailed),
      ms: jailed.ms,
    };
    return { result, notes };
  }

  /** The owner's DANGEROUS opt-in (`unsafeNoSandbox`) where no jail works: the old per-process limits only. */
  private async runUnjailed(files: WorkspaceFiles, name: string, python: string, o: WorkspaceOptions, usedBytes: number): Promise<{ result: RunResult; notes: string[] }> {
    const quota = o.quotaMb * 1024 * 1024;
    const existing = new Set((await files.list()).map((f) => f.name));
    const result = await runPython({
      dir: files.dir,
      script: name,
      python,
      unsandboxed: true,
      limits: {
        timeLimitSeconds: o.timeLimitSeconds,
        cpuSeconds: o.cpuSeconds,
        memoryMb: o.memoryMb,
        maxProcesses: o.maxProcesses,
        maxOutputBytes: o.maxOutputBytes,
        maxWriteBytes: quota - usedBytes,
        tmpMb: o.tmpMb,
      },
    });
    const notes: string[] = [];
    const removed = await files.removeSpecialFiles();
    if (removed.length) notes.push(`Removed ${removed.length} link(s)/special file(s) the script made (only regular files are kept): ${removed.slice(0, 5).map(shownName).join(', ')}`);
    const after = await files.usage();
    if (after.bytes >= quota || after.entries > o.maxFiles) {
      const fresh = (await files.list()).filter((f) => !existing.has(f.name));
      for (const f of fresh) await files.remove(f.name).catch(() => undefined);
      notes.push(`The run left the workspace over its limits (${kb(after.bytes)}, ${after.entries} entries; quota ${kb(quota)}, ${o.maxFiles} entries), so the ${fresh.length} new file(s) it wrote were deleted.`);
    }
    return { result, notes };
  }

  /** Runs a file operation while no script runs in the workspace; turns refusals into text. */
  async fileOp(meta: WorkspaceMeta, op: (files: WorkspaceFiles) => Promise<string>): Promise<string> {
    return this.locks.exclusive(meta.id, async () => {
      try {
        return await op(this.files(meta));
      } catch (err) {
        if (err instanceof BadFileName || err instanceof FileRefused) return `Refused: ${err.message}.`;
        throw err;
      }
    });
  }
}

/** The user-facing report of one run. */
export function formatRun(name: string, r: RunResult, o: WorkspaceOptions, sandboxed: boolean, notes: string[] = []): string {
  const lines: string[] = [];
  const secs = (r.ms / 1000).toFixed(1);
  let status: string;
  if (r.setupFailed) status = 'the sandbox could not be set up, so nothing ran';
  else if (r.stopped === 'time') status = `stopped: it hit the time limit of ${o.timeLimitSeconds} s (an endless loop?)`;
  else if (r.stopped === 'output') status = `stopped: it printed more than ${kb(o.maxOutputBytes)} of output`;
  else if (r.stopped === 'watchdog') status = `stopped: ${r.stoppedDetail}`;
  else if (r.stopped === 'cpu') status = `stopped: it used up its CPU time (${o.cpuSeconds} s)`;
  else if (r.stopped === 'disk') status = `stopped: it wrote more than its ${o.tmpMb} MB of temporary space`;
  else if (r.outOfMemory) status = `it ran out of memory (limit ${o.memoryMb} MB)`;
  else if (r.signal === 'SIGXCPU' || r.exitCode === 152) status = `stopped: it used up its CPU time (${o.cpuSeconds} s)`;
  else if (r.signal) status = `killed by ${r.signal}`;
  else status = `exit code ${r.exitCode}`;
  lines.push(`▶ ${name}: ${status} (${secs} s${sandboxed ? '' : ', UNSANDBOXED'})`);
  const output = r.output.replace(/\s+$/, '');
  if (output) {
    const shown = output.length > CHAT_OUTPUT_CHARS ? `${output.slice(0, CHAT_OUTPUT_CHARS)}\n… (${output.length - CHAT_OUTPUT_CHARS} more characters)` : output;
    lines.push('```', shown, '```');
  } else lines.push('(no output)');
  if (r.truncated && r.stopped !== 'output') lines.push(`Output cut at ${kb(o.maxOutputBytes)}.`);
  lines.push(...notes);
  return lines.join('\n');
}
