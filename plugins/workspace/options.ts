import type { PluginSection } from '../../core/config/schema.js';

/** The workspace plugin's settings (config.json `plugins.workspace`), with safe defaults filled in. */
export interface WorkspaceOptions {
  /** Wall-clock limit of one run; the sandbox is killed when it is reached. */
  timeLimitSeconds: number;
  /** CPU seconds of one run (RLIMIT_CPU). */
  cpuSeconds: number;
  /** Address space of each sandboxed process (RLIMIT_AS). */
  memoryMb: number;
  /** Processes and threads the sandbox user may have (RLIMIT_NPROC). */
  maxProcesses: number;
  /** Bytes of stdout + stderr kept from one run; the run is stopped when it prints more. */
  maxOutputBytes: number;
  /** Disk space of one workspace. */
  quotaMb: number;
  /** Number of files (and folders) in one workspace. */
  maxFiles: number;
  /** Largest file the model or a user may write in one go. */
  maxFileKb: number;
  /** Size of the sandbox's private /tmp (memory-backed). */
  tmpMb: number;
  /** Runs at the same time across all users; more wait their turn. */
  maxConcurrentRuns: number;
  /** An open workspace closes itself after this many idle minutes. */
  idleMinutes: number;
  /** When the service runs as root, sandboxed code runs as this uid/gid (never as root). From the environment only. */
  sandboxUid: number;
  sandboxGid: number;
  /** DANGEROUS: run code without bubblewrap when the sandbox is missing. From the environment only. */
  unsafeNoSandbox: boolean;
}

export const DEFAULT_OPTIONS: WorkspaceOptions = {
  timeLimitSeconds: 10,
  cpuSeconds: 10,
  memoryMb: 256,
  maxProcesses: 32,
  maxOutputBytes: 64 * 1024,
  quotaMb: 20,
  maxFiles: 500,
  maxFileKb: 1024,
  tmpMb: 16,
  maxConcurrentRuns: 2,
  idleMinutes: 60,
  sandboxUid: 65534,
  sandboxGid: 65534,
  unsafeNoSandbox: false,
};

const int = (minimum: number, maximum: number, description: string) => ({ type: 'integer', minimum, maximum, description });

/** JSON schema of the options (validated by the core at start and by the dashboard). */
export const optionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    timeLimitSeconds: int(1, 600, 'wall-clock limit of one python run, seconds (default 10)'),
    cpuSeconds: int(1, 600, 'CPU seconds of one run (default 10)'),
    memoryMb: int(32, 8192, 'memory (address space) of each sandboxed process, MB (default 256)'),
    maxProcesses: int(1, 1024, 'processes/threads the sandbox may have (default 32)'),
    maxOutputBytes: int(1024, 10 * 1024 * 1024, 'output kept from one run, bytes (default 65536)'),
    quotaMb: int(1, 10240, 'disk space of one workspace, MB (default 20)'),
    maxFiles: int(1, 100000, 'files and folders in one workspace (default 500)'),
    maxFileKb: int(1, 102400, 'largest file written through the chat, KB (default 1024)'),
    tmpMb: int(1, 1024, 'size of the private /tmp inside the sandbox, MB (default 16)'),
    maxConcurrentRuns: int(1, 64, 'runs at the same time across all users (default 2)'),
    idleMinutes: int(1, 10080, 'an open workspace closes after this many idle minutes (default 60)'),
  },
} as const;

/**
 * The options of the live config section with defaults for what is not set.
 *
 * @example readOptions(host.options()).timeLimitSeconds // 10
 */
export function readOptions(section: PluginSection, env: (name: string) => string | undefined = () => undefined): WorkspaceOptions {
  const out = { ...DEFAULT_OPTIONS };
  for (const key of Object.keys(DEFAULT_OPTIONS) as Array<keyof WorkspaceOptions>) {
    if (key in MOVED_TO_ENV) continue;
    const value = section[key];
    if (typeof value === typeof DEFAULT_OPTIONS[key]) (out as Record<string, unknown>)[key] = value;
  }
  const id = (raw: string | undefined, fallback: number) => (raw && /^\d+$/.test(raw.trim()) && Number(raw) >= 1 && Number(raw) <= 4294967294 ? Number(raw) : fallback);
  out.sandboxUid = id(env('WORKSPACE_SANDBOX_UID'), DEFAULT_OPTIONS.sandboxUid);
  out.sandboxGid = id(env('WORKSPACE_SANDBOX_GID'), DEFAULT_OPTIONS.sandboxGid);
  out.unsafeNoSandbox = /^(1|true|yes)$/i.test(env('WORKSPACE_UNSAFE_NO_SANDBOX')?.trim() ?? '');
  return out;
}

/**
 * Settings that decide whether and as whom untrusted code runs: environment only, never config.json or the
 * dashboard (a dashboard session must not be able to switch the sandbox off).
 */
export const ENV_SETTINGS = [
  { name: 'WORKSPACE_UNSAFE_NO_SANDBOX', description: 'DANGEROUS: "true" runs user code WITHOUT bubblewrap when the sandbox is missing' },
  { name: 'WORKSPACE_SANDBOX_UID', description: 'uid sandboxed code runs as when the service runs as root (default 65534)' },
  { name: 'WORKSPACE_SANDBOX_GID', description: 'gid sandboxed code runs as when the service runs as root (default 65534)' },
] as const;

/** The old config.json options these replace: option → environment setting. */
export const MOVED_TO_ENV = { unsafeNoSandbox: 'WORKSPACE_UNSAFE_NO_SANDBOX', sandboxUid: 'WORKSPACE_SANDBOX_UID', sandboxGid: 'WORKSPACE_SANDBOX_GID' } as const;
