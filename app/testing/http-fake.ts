import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fake received: all of it, as the upstream would see it. */
export interface RecordedRequest {
  method: string;
  /** The path without the query string (`/search`). */
  path: string;
  /** The path with its query string, as sent (`/search?q=cats&page=2`). */
  url: string;
  /** The query string parsed (`{ q: 'cats', page: '2' }`); a name given more than once has a list of its values. */
  query: Record<string, string | string[]>;
  /** Header names in lower case, as Node gives them. */
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body as UTF-8 text. */
  text: string;
  /** The body parsed as JSON when it is JSON. */
  json?: any;
}

/** A query string as a plain object: one value a string, repeated names a list. */
function parseQuery(search: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const name of new Set(search.keys())) {
    const values = search.getAll(name);
    query[name] = values.length === 1 ? values[0] : values;
  }
  return query;
}

/** What the fake does with one request. */
export type FakeBehaviour =
  | { status: number; json?: unknown; text?: string; body?: Buffer; headers?: Record<string, string> }
  | 'hang'
  | 'drop'
  | ((req: RecordedRequest) => FakeBehaviour | Promise<FakeBehaviour>);

/**
 * A real HTTP server on 127.0.0.1 (random port) for upstream fakes. Routes map `METHOD /path` to a behaviour (any
 * query string: `GET /search` answers `/search?q=cats` too; `GET /search?q=cats` as a route answers that exact query
 * first; `* /path` any method); a one-shot queue per route (`next`) overrides the default for the next requests. It can
 * answer any status, hang (never answer) or drop the connection. Each request is recorded whole: method, path, url
 * with the query, the parsed query, headers, body (bytes, text, JSON).
 *
 * @example
 * const fake = await HttpFake.start({ 'GET /': { status: 200, text: 'ok' } });
 * fake.next('POST /v1/chat/completions', { status: 429, json: { error: { code: 'rate_limit' } } });
 * const [req] = fake.received('GET /search'); // req.query.q, req.headers.authorization
 * await fake.close();
 */
export class HttpFake {
  readonly requests: RecordedRequest[] = [];
  /**
   * The bot's start probe requests (header `x-wa-bot-probe`): recorded here, not in `requests`, and answered by
   * `probeAnswer` (never from the `next` queue), so tests counting or scripting users' requests see only those.
   */
  readonly probes: RecordedRequest[] = [];
  /** How probes are answered, per route (`'POST /v1/chat/completions'`); a route without one answers 404. */
  readonly probeAnswers = new Map<string, FakeBehaviour>();
  private readonly queues = new Map<string, FakeBehaviour[]>();
  private readonly hanging = new Set<http.ServerResponse>();
  private readonly watchers = new Set<() => void>();

  private constructor(private readonly server: http.Server, readonly routes: Record<string, FakeBehaviour>) {}

  static async start(routes: Record<string, FakeBehaviour> = {}): Promise<HttpFake> {
    let fake!: HttpFake;
    const server = http.createServer((req, res) => void fake.handle(req, res));
    fake = new HttpFake(server, routes);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `http://127.0.0.1:<port>` */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * Resolves with what `check` returns once it holds, tried now and again as each request arrives (before it is
   * answered): how a test waits for the bot to reach this upstream without polling.
   * @example await fake.until(() => fake.received('GET /search').length === 2);
   */
  until<T>(check: () => T | undefined | null | false): Promise<T> {
    const now = check();
    if (now) return Promise.resolve(now);
    return new Promise<T>((resolve) => {
      const watcher = () => {
        const hit = check();
        if (!hit) return;
        this.watchers.delete(watcher);
        resolve(hit);
      };
      this.watchers.add(watcher);
    });
  }

  /** Queues behaviours for the next requests to a route (`'POST /v1/chat/completions'`). */
  next(route: string, ...behaviours: FakeBehaviour[]): this {
    const queue = this.queues.get(route) ?? [];
    queue.push(...behaviours);
    this.queues.set(route, queue);
    return this;
  }

  /** Requests received on a route: `METHOD /path` with any query, `METHOD /path?query` that exact query. */
  received(route?: string): RecordedRequest[] {
    if (!route) return this.requests;
    const [method, target] = route.split(' ');
    return this.requests.filter((r) => (method === '*' || r.method === method) && (target.includes('?') ? r.url === target : r.path === target));
  }

  reset(): void {
    this.requests.length = 0;
    this.probes.length = 0;
    this.queues.clear();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = req.url ?? '/';
    // As sent: no normalising of the path (a test of what the bot asks for sees `..` or `//` as they came).
    const [path, search = ''] = url.split(/\?(.*)/s);
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path, url, query: parseQuery(new URLSearchParams(search)), headers: req.headers, body, text: body.toString('utf8') };
    if (/json/.test(req.headers['content-type'] ?? '')) {
      try {
        recorded.json = JSON.parse(body.toString('utf8'));
      } catch {
        /* not JSON */
      }
    }
    const route = `${recorded.method} ${path}`;
    const exact = `${recorded.method} ${url}`;
    const probe = req.headers['x-wa-bot-probe'] !== undefined;
    (probe ? this.probes : this.requests).push(recorded);
    for (const watcher of [...this.watchers]) watcher();
    // The exact query first, then the path with any query, then any method.
    const fromQueue = () => (url !== path ? this.queues.get(exact)?.shift() : undefined) ?? this.queues.get(route)?.shift();
    const fromRoutes = () => (url !== path ? this.routes[exact] : undefined) ?? this.routes[route] ?? this.routes[`* ${url}`] ?? this.routes[`* ${path}`];
    let behaviour: FakeBehaviour | undefined = probe ? this.probeAnswers.get(route) : (fromQueue() ?? fromRoutes());
    while (typeof behaviour === 'function') behaviour = await behaviour(recorded);
    if (!behaviour) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${route}` } }));
      return;
    }
    if (behaviour === 'hang') {
      this.hanging.add(res);
      return;
    }
    if (behaviour === 'drop') {
      req.socket.destroy();
      return;
    }
    const headers = { ...(behaviour.headers ?? {}) };
    if (behaviour.body !== undefined) {
      res.writeHead(behaviour.status, { 'content-type': 'application/octet-stream', ...headers }).end(behaviour.body);
    } else if (behaviour.json !== undefined) {
      res.writeHead(behaviour.status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(behaviour.json));
    } else {
      res.writeHead(behaviour.status, { 'content-type': 'text/plain', ...headers }).end(behaviour.text ?? '');
    }
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
