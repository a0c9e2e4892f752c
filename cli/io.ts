/**
 * What a command reads and writes: its arguments, folder, environment and output streams. The `node dist/cli/<x>.js`
 * files hand it the process's own (`processIo()`); tests run the same command in their process with strings for
 * output, which costs a fraction of a spawned node.
 */
export interface CliIo {
  /** The arguments after the script's name. */
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** stdin and stdout are a terminal: a command may ask questions there. */
  terminal: boolean;
}

export function processIo(): CliIo {
  return {
    args: process.argv.slice(2),
    cwd: process.cwd(),
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    terminal: Boolean(process.stdin.isTTY && process.stdout.isTTY),
  };
}
