import { Type, type Static } from '../../core/index.js';

/** A whole-number option; its title is the dashboard's label. */
const int = (title: string, minimum: number, maximum: number, fallback: number, description: string) => Type.Integer({ title, minimum, maximum, default: fallback, description });

/** The options in config.json `plugins.workspace`, declared once: the core validates them and fills in the defaults. */
export const workspaceOptions = Type.Object(
  {
    timeLimitSeconds: int('Run time limit (seconds)', 1, 600, 10, 'wall-clock limit of one python run, seconds (default 10)'),
    cpuSeconds: int('CPU time per run (seconds)', 1, 600, 10, 'CPU seconds of one run (default 10)'),
    memoryMb: int('Memory per process (MB)', 32, 8192, 256, 'memory (address space) of each sandboxed process, MB (default 256)'),
    maxProcesses: int('Most processes', 1, 1024, 32, 'processes/threads the sandbox may have (default 32)'),
    maxOutputBytes: int('Output kept per run (bytes)', 1024, 10 * 1024 * 1024, 64 * 1024, 'output kept from one run, bytes (default 65536)'),
    quotaMb: int('Workspace disk space (MB)', 1, 10240, 20, 'disk space of one workspace, MB (default 20)'),
    maxFiles: int('Most files per workspace', 1, 100000, 500, 'files and folders in one workspace (default 500)'),
    maxFileKb: int('Largest file written (KB)', 1, 102400, 1024, 'largest file written through the chat, KB (default 1024)'),
    maxSendMb: int('Largest file sent (MB)', 1, 100, 16, 'largest file the model may send from a workspace to the chat, MB (default 16)'),
    tmpMb: int('Sandbox /tmp size (MB)', 1, 1024, 16, 'size of the private /tmp inside the sandbox, MB (default 16)'),
    maxConcurrentRuns: int('Runs at once in all', 1, 64, 2, 'runs at the same time across all users (default 2)'),
    idleMinutes: int('Closes after idle (minutes)', 1, 10080, 60, 'an open workspace closes after this many idle minutes (default 60)'),
  },
  { additionalProperties: false },
);

/** The workspace's limits: its typed options plus the settings that come from the environment only. */
export interface WorkspaceOptions extends Static<typeof workspaceOptions> {
  /** When the service runs as root, sandboxed code runs as this uid/gid (never as root). */
  sandboxUid: number;
  sandboxGid: number;
  /** DANGEROUS: run code without bubblewrap when the sandbox is missing. */
  unsafeNoSandbox: boolean;
}

/** The uid/gid sandboxed code runs as when WORKSPACE_SANDBOX_UID/GID are not set (nobody/nogroup). */
const NOBODY = 65534;

/**
 * The typed options with the environment-only settings added.
 *
 * @example withEnvSettings(host.options(), (name) => host.setting(name)).unsafeNoSandbox // false
 */
export function withEnvSettings(options: Static<typeof workspaceOptions>, env: (name: string) => string | undefined): WorkspaceOptions {
  const id = (raw: string | undefined) => (raw && /^\d+$/.test(raw.trim()) && Number(raw) >= 1 && Number(raw) <= 4294967294 ? Number(raw) : NOBODY);
  return {
    ...options,
    sandboxUid: id(env('WORKSPACE_SANDBOX_UID')),
    sandboxGid: id(env('WORKSPACE_SANDBOX_GID')),
    unsafeNoSandbox: /^(1|true|yes)$/i.test(env('WORKSPACE_UNSAFE_NO_SANDBOX')?.trim() ?? ''),
  };
}

/**
 * Settings that decide whether and as whom untrusted code runs: environment only, never config.json or the
 * dashboard (a dashboard session must not be able to switch the sandbox off).
 */
export const ENV_SETTINGS = [
  { name: 'WORKSPACE_UNSAFE_NO_SANDBOX', description: 'DANGEROUS: "true" runs user code WITHOUT bubblewrap when the sandbox is missing' },
  { name: 'WORKSPACE_SANDBOX_UID', description: 'uid sandboxed code runs as when the service runs as root (default 65534)' },
  { name: 'WORKSPACE_SANDBOX_GID', description: 'gid sandboxed code runs as when the service runs as root (default 65534)' },
];

/** The old config.json options these replace: option → environment setting. */
export const MOVED_TO_ENV = { unsafeNoSandbox: 'WORKSPACE_UNSAFE_NO_SANDBOX', sandboxUid: 'WORKSPACE_SANDBOX_UID', sandboxGid: 'WORKSPACE_SANDBOX_GID' } as const;

/** The guard's name for `/ws reset confirm` (a `deleteFiles` effect, declared at start). */
export const RESET_EFFECT = 'reset';
