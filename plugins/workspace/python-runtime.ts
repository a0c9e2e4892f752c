import { existsSync, realpathSync } from 'node:fs';
import type { PluginHost } from '../../core/index.js';
import type { WorkspaceOptions } from './options.js';

/*
 * Whether python code can run, decided at start for the start log and at each run: light on purpose, so a start
 * says it without loading the sandbox and the rest of the workspace's handling (they load with the first /ws).
 */

/** Whether code can run, and how; `reason` is the user-facing explanation when it cannot. */
export type Runtime = { ok: true; python: string; sandboxed: boolean } | { ok: false; reason: string };

/**
 * The python to run inside the sandbox: only /usr is visible there, so it must live under /usr (pyenv/venv
 * pythons under /root or /home are not usable). Returns undefined when there is none.
 *
 * @example systemPython() // '/usr/bin/python3'
 */
export function systemPython(candidates = ['/usr/bin/python3', '/usr/local/bin/python3']): string | undefined {
  for (const candidate of candidates) {
    try {
      if (existsSync(candidate) && realpathSync(candidate).startsWith('/usr/')) return candidate;
    } catch {
      /* try the next */
    }
  }
  return undefined;
}

/**
 * Whether python code can run now, and the reason when not.
 *
 * @example pythonRuntime(host.capabilities, systemPython(), options) // { ok: true, python: '/usr/bin/python3', sandboxed: true }
 */
export function pythonRuntime(caps: PluginHost['capabilities'], pythonPath: string | undefined, options: Pick<WorkspaceOptions, 'unsafeNoSandbox'>): Runtime {
  if (!caps.has('python') && !pythonPath) {
    return { ok: false, reason: `The python runtime is unavailable on this bot: ${caps.status('python').detail}. You can still create and edit files.` };
  }
  if (!pythonPath) {
    return { ok: false, reason: 'The python runtime is unavailable: there is no python 3 under /usr, the only system folder the sandbox shows (install the Debian package python3). You can still create and edit files.' };
  }
  if (caps.has('sandbox')) return { ok: true, python: pythonPath, sandboxed: true };
  if (options.unsafeNoSandbox) return { ok: true, python: pythonPath, sandboxed: false };
  return {
    ok: false,
    reason: `I cannot run code here: the sandbox does not work on this server (${caps.status('sandbox').detail}), and running your code without it would expose the server. You can still create and edit files; the owner can install bubblewrap.`,
  };
}
