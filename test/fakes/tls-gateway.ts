import { readFileSync } from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures/tls');

/** What the gateway received of one request. */
export interface TlsRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** How the gateway answers one request. */
export interface TlsAnswer {
  status: number;
  json: unknown;
  headers?: Record<string, string>;
}

/**
 * An OpenAI-style gateway over HTTPS on 127.0.0.1, with the self-signed loopback certificate of test/fixtures/tls
 * (made for 127.0.0.1 only, see its README): what a gateway behind TLS looks like to the bot, with no network. A
 * client trusts it by taking `ca` as its certificate authority.
 *
 * @example
 * const gw = await TlsGateway.start(() => ({ status: 200, json: completion('hi') }));
 * new https.Agent({ ca: gw.ca }); // trusts it
 */
export class TlsGateway {
  readonly requests: TlsRequest[] = [];
  /** The certificate to trust (self-signed: it is its own authority). */
  readonly ca = readFileSync(path.join(FIXTURES, 'loopback-cert.pem'));

  private constructor(private readonly server: https.Server) {}

  static async start(answer: (req: TlsRequest) => TlsAnswer): Promise<TlsGateway> {
    const server = https.createServer({ cert: readFileSync(path.join(FIXTURES, 'loopback-cert.pem')), key: readFileSync(path.join(FIXTURES, 'loopback-key.pem')) });
    const gateway = new TlsGateway(server);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const parts: Buffer[] = [];
      req.on('data', (chunk: Buffer) => parts.push(chunk));
      req.on('end', () => {
        const received = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, text: Buffer.concat(parts).toString('utf8') };
        gateway.requests.push(received);
        const { status, json, headers } = answer(received);
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(json));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return gateway;
  }

  /** `https://127.0.0.1:<port>` */
  get url(): string {
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
