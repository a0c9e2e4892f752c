import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** An answer of `bytes` bytes: `head`, then filler made up while it is sent (never held), then `tail`. */
export interface Flood {
  contentType: string;
  head: string;
  tail?: string;
  bytes: number;
}

export type FloodRoute = Flood | ((req: http.IncomingMessage, res: http.ServerResponse) => void);

/**
 * An upstream on 127.0.0.1 that answers with floods: each route (`POST /v1/chat/completions`) either floods or
 * answers as a handler says. `written` resolves, per flood, with the bytes the server got written before the client
 * hung up or the flood ended: what the client could have read.
 *
 * @example
 * const up = await FloodServer.start({ 'POST /v1/chat/completions': { contentType: 'application/json', head: '{"a":"', bytes: 512 * MB } });
 */
export class FloodServer {
  readonly written: Array<Promise<number>> = [];
  private constructor(private readonly server: http.Server, readonly routes: Record<string, FloodRoute>) {}

  static async start(routes: Record<string, FloodRoute>): Promise<FloodServer> {
    let flood!: FloodServer;
    const server = http.createServer((req, res) => flood.handle(req, res));
    flood = new FloodServer(server, routes);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return flood;
  }

  /** `http://127.0.0.1:<port>` */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const route = this.routes[`${req.method} ${(req.url ?? '/').split('?')[0]}`];
    if (!route) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such route"}}');
    if (typeof route === 'function') return route(req, res);
    req.resume();
    this.written.push(send(res, route));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

async function send(res: http.ServerResponse, flood: Flood): Promise<number> {
  const filler = Buffer.alloc(256 * 1024, 'A');
  let closed = false;
  const hungUp = new Promise<void>((resolve) => res.once('close', () => resolve(void (closed = true))));
  res.writeHead(200, { 'content-type': flood.contentType });
  let written = 0;
  res.write(flood.head);
  written += flood.head.length;
  while (!closed && written < flood.bytes) {
    const size = Math.min(filler.length, flood.bytes - written);
    written += size;
    if (!res.write(filler.subarray(0, size))) await Promise.race([new Promise((resolve) => res.once('drain', resolve)), hungUp]);
  }
  if (!closed) res.end(flood.tail ?? '');
  await hungUp;
  return written;
}
