import childProcess, { ChildProcess } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

/**
 * Mocha root hooks of `npm run test:fast` (.mocharc.fast.cjs): the fast tier runs in-process only, so a test there
 * that starts a child process (the console, ffmpeg, bubblewrap, a browser, a CLI) fails, naming the command. Without
 * this check the tier would slowly fill with slow tests nobody notices; the fix is to list the file among the slow
 * ones in .mocharc.fast.cjs (or to test the same thing without the process).
 */
const started: string[] = [];
const commandLine = (file: unknown, args: unknown): string => [String(file), ...(Array.isArray(args) ? args.map(String) : [])].join(' ');
/**
 * The machine probes every bot makes at start (is bubblewrap there and can it make a sandbox; a tool's version):
 * a few milliseconds each, never what a test is about. Anything else counts.
 */
const START_PROBES = [/^\S*bwrap --version$/, /bwrap --unshare-all .* \S*bwrap --version$/, /^\S+ -{1,2}version$/];
const note = (command: string) => {
  if (!START_PROBES.some((probe) => probe.test(command))) started.push(command.slice(0, 160));
};

// Every asynchronous start (spawn, exec, execFile, fork, and libraries holding their own reference to them) goes
// through ChildProcess.prototype.spawn; the synchronous ones are patched one by one.
// (An internal method Node's typings leave out.)
const prototype = ChildProcess.prototype as unknown as { spawn: (this: ChildProcess, options: { file?: string; args?: string[] }) => unknown };
const spawnChild = prototype.spawn;
prototype.spawn = function (options) {
  note(commandLine(options.file, options.args?.slice(1)));
  return spawnChild.call(this, options);
};
const syncStarts = childProcess as unknown as Record<'spawnSync' | 'execSync' | 'execFileSync', (...args: unknown[]) => unknown>;
for (const name of ['spawnSync', 'execSync', 'execFileSync'] as const) {
  const real = syncStarts[name];
  syncStarts[name] = function (this: unknown, ...args: unknown[]) {
    note(commandLine(args[0], args[1]));
    return real.apply(this, args);
  };
}
// ESM imports of node:child_process see the patched functions too.
syncBuiltinESMExports();

export const mochaHooks = {
  afterEach(this: Mocha.Context): void {
    if (!started.length) return;
    const commands = started.splice(0);
    throw new Error(
      `"${this.currentTest?.fullTitle()}" (or a hook before it) started ${commands.length} child process(es), e.g. ${commands[0]}: ` +
        `the fast tier runs in-process only. List the file among the slow ones in .mocharc.fast.cjs.`,
    );
  },
};
