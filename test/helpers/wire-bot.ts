import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './checkout.js';

/**
 * The bot as `npm start` runs it (`dist/cli/start.js`, the real WhatsApp transport and wiring) in its own process,
 * with JSON logs on stderr collected for the test.
 *
 * @example
 * const bot = WireBot.start(dir, { WA_WEBSOCKET_URL: wa.socketUrl, ... });
 * await bot.waitForLog((l) => String(l.msg).startsWith('myLID'));
 * expect(await bot.stop()).to.equal(0);
 */
export class WireBot {
  private readonly lines: Array<Record<string, any>> = [];
  /** waitForLog() callers, told of each log line and of the exit. */
  private readonly watchers = new Set<() => void>();
  private buffered = '';
  private readonly exit: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    child.stderr?.on('data', (chunk: Buffer) => {
      this.buffered += chunk.toString();
      const parts = this.buffered.split('\n');
      this.buffered = parts.pop() ?? '';
      for (const line of parts.filter(Boolean)) {
        try {
          this.lines.push(JSON.parse(line) as Record<string, any>);
        } catch {
          this.lines.push({ msg: line, raw: true });
        }
      }
      this.poke();
    });
    this.exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    void this.exit.then(() => this.poke());
  }

  static start(cwd: string, env: Record<string, string>): WireBot {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'cli', 'start.js')], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? cwd, TMPDIR: process.env.TMPDIR ?? '/tmp', LOG_FORMAT: 'json', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return new WireBot(child);
  }

  logs(): Array<Record<string, any>> {
    return [...this.lines];
  }

  messages(): string[] {
    return this.lines.map((l) => String(l.msg));
  }

  /** Resolves with the first log line matching; rejects when the process ends first or after `timeoutMs`. */
  waitForLog(match: (line: Record<string, any>) => boolean, timeoutMs = 30_000): Promise<Record<string, any>> {
    return new Promise((resolve, reject) => {
      const done = () => {
        this.watchers.delete(check);
        clearTimeout(timer);
      };
      const check = () => {
        const found = this.lines.find(match);
        if (found) return void (done(), resolve(found));
        if (this.child.exitCode !== null) return void (done(), reject(new Error(`the bot exited (${this.child.exitCode}) first; its log:\n${this.messages().join('\n')}`)));
      };
      const timer = setTimeout(() => (done(), reject(new Error(`no matching log line within ${timeoutMs} ms; the log:\n${this.messages().join('\n')}`))), timeoutMs);
      this.watchers.add(check);
      check();
    });
  }

  private poke(): void {
    for (const watch of [...this.watchers]) watch();
  }

  /** SIGTERM (a graceful stop), then waits for the exit code; SIGKILL when it does not end within 30 s. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    const code = await this.exit;
    clearTimeout(timer);
    return code;
  }
}
