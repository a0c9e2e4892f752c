import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GatewayMode, GatewayName, GatewayRequest } from './gateway-process.js';

type Pending = (result: unknown) => void;
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

/**
 * Handle on the fake upstream process (`gateway-process.ts`): two OpenAI-compatible gateways on 127.0.0.1 that
 * answer at once, with request counters and a switchable 429 mode.
 *
 * @example
 * const gw = await BenchGateway.start();
 * await gw.setMode('primary', '429-long');
 * const { primary } = await gw.counts();
 * await gw.close();
 */
export class BenchGateway {
  private seq = 0;
  private readonly pending = new Map<number, Pending>();

  private constructor(private readonly child: ChildProcess, readonly urls: Record<GatewayName, string>) {
    child.on('message', (msg: { id?: number; result?: unknown }) => {
      if (msg.id === undefined) return;
      this.pending.get(msg.id)?.(msg.result);
      this.pending.delete(msg.id);
    });
  }

  static async start(): Promise<BenchGateway> {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const child = fork(path.join(here, 'gateway-process.js'), [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const urls = await new Promise<Record<GatewayName, string>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the fake gateway did not start within 10 s')), 10_000);
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`the fake gateway exited with code ${code}`)));
      child.once('message', (msg: { ready?: boolean; urls?: Record<GatewayName, string> }) => {
        clearTimeout(timer);
        if (msg.ready && msg.urls) resolve(msg.urls);
        else reject(new Error('unexpected first message from the fake gateway'));
      });
    });
    child.removeAllListeners('exit');
    return new BenchGateway(child, urls);
  }

  private ask<T>(request: WithoutId<GatewayRequest>): Promise<T> {
    const id = ++this.seq;
    return new Promise<T>((resolve) => {
      this.pending.set(id, resolve as Pending);
      this.child.send({ ...request, id });
    });
  }

  /** `http://127.0.0.1:<port>/v1` of a gateway. */
  v1(name: GatewayName): string {
    return `${this.urls[name]}/v1`;
  }

  setMode(gateway: GatewayName, mode: GatewayMode): Promise<boolean> {
    return this.ask({ op: 'mode', gateway, mode });
  }

  /** Chat-completion requests each gateway has received so far. */
  counts(): Promise<Record<GatewayName, number>> {
    return this.ask({ op: 'stats' });
  }

  /** The raw JSON body of the last chat-completion request a gateway received for an answer (chat-summary folds left out). */
  lastBody(gateway: GatewayName): Promise<string> {
    return this.ask({ op: 'lastBody', gateway });
  }

  /** The raw JSON body of the last chat-summary fold request a gateway received ('' before the first). */
  lastFoldBody(gateway: GatewayName): Promise<string> {
    return this.ask({ op: 'lastFoldBody', gateway });
  }

  /** Chat-summary fold requests each gateway has received so far (also counted in `counts`). */
  folds(): Promise<Record<GatewayName, number>> {
    return this.ask({ op: 'folds' });
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.disconnect();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}
