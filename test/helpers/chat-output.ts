/**
 * What a console chat (spawned or in this process) has printed so far, and waits on it: a wait resolves with the
 * first probe hit after any output arrives, and rejects when the chat ends first or after its timeout. Shared by
 * live-chat.ts (the spawned chat) and console-chat.ts (the in-process one), which only differ in where the bytes
 * come from.
 *
 * @example
 * const out = chatOutput({ logName: 'stderr', endedAs: 'exited' });
 * child.stdout.on('data', (d) => out.addStdout(d));
 * await out.waitFor(() => out.lines().find((l) => /pong/.test(l)), 'the pong', 30_000);
 */
export interface ChatOutput {
  stdout(): string;
  stderr(): string;
  /** stdout lines so far (empty lines dropped). */
  lines(): string[];
  addStdout(chunk: { toString(): string }): void;
  addStderr(chunk: { toString(): string }): void;
  /** The chat has ended: pending waits that did not hit reject. */
  end(): void;
  waitFor<T>(probe: () => T | undefined, what: string, timeoutMs: number): Promise<T>;
}

export function chatOutput(names: { logName: string; endedAs: string }): ChatOutput {
  let stdout = '';
  let stderr = '';
  let ended = false;
  const watchers = new Set<() => void>();
  const poke = () => {
    for (const watcher of [...watchers]) watcher();
  };
  const printed = () => `\nstdout:\n${stdout}\n${names.logName}:\n${stderr}`;
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    lines: () => stdout.split('\n').filter((l) => l.length),
    addStdout(chunk) {
      stdout += chunk.toString();
      poke();
    },
    addStderr(chunk) {
      stderr += chunk.toString();
      poke();
    },
    end() {
      ended = true;
      poke();
    },
    waitFor: <T>(probe: () => T | undefined, what: string, timeoutMs: number): Promise<T> =>
      new Promise((resolve, reject) => {
        const check = () => {
          const hit = probe();
          if (hit !== undefined) {
            done();
            resolve(hit);
          } else if (ended) {
            done();
            reject(new Error(`console chat ${names.endedAs} before ${what}${printed()}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`timed out waiting for ${what}${printed()}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          watchers.delete(check);
        };
        watchers.add(check);
        check();
      }),
  };
}
