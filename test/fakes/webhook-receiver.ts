import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { signatureMatches } from '../../core/services/webhooks/signature.js';

/** One POST the receiver got. */
export interface ReceivedWebhook {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: { id: string; event: string; at: string; data: Record<string, any> };
  /** The HMAC over `<X-Hook-Timestamp>.<body>` with the receiver's secret matched `X-Hook-Signature`. */
  signed: boolean;
}

/**
 * A webhook receiver on 127.0.0.1: it checks each POST's signature as a real receiver would, and answers with the
 * statuses it is told, in turn (`200` once they are used up); `'hang'` holds the request until `release()`.
 *
 * @example const r = await WebhookReceiver.start('s3cret', [500]); … await r.until(2);
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly waiters = new Set<() => void>();
  private readonly held: http.ServerResponse[] = [];

  private constructor(
    private readonly server: http.Server,
    private readonly secret: string,
    private readonly answers: Array<number | 'hang'>,
  ) {}

  static async start(secret: string, answers: Array<number | 'hang'> = []): Promise<WebhookReceiver> {
    let receiver!: WebhookReceiver;
    const server = http.createServer((req, res) => receiver.take(req, res));
    receiver = new WebhookReceiver(server, secret, [...answers]);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private take(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const timestamp = String(req.headers['x-hook-timestamp'] ?? '');
      const signed = signatureMatches(this.secret, timestamp, body, String(req.headers['x-hook-signature'] ?? ''));
      this.received.push({ path: req.url ?? '', headers: req.headers, body, json: JSON.parse(body), signed });
      const answer = this.answers.shift() ?? 200;
      if (answer === 'hang') this.held.push(res);
      else {
        res.statusCode = answer;
        res.end(answer === 200 ? 'ok' : 'failed');
      }
      for (const waiter of [...this.waiters]) waiter();
    });
  }

  /** Resolves once `count` requests arrived. */
  until(count: number): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = () => {
        if (this.received.length < count) return;
        this.waiters.delete(waiter);
        resolve();
      };
      this.waiters.add(waiter);
    });
  }

  /** Answers the held requests with 200. */
  release(): void {
    for (const res of this.held.splice(0)) res.end('ok');
  }

  async close(): Promise<void> {
    this.release();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
