import { lookup } from 'node:dns/promises';
import http from 'node:http';
import net from 'node:net';

/** Which destinations a download may reach. */
export interface EgressPolicy {
  /** True for an address that must never be reached (loopback, private, link-local, reserved, in every spelling). */
  isBlocked(address: string): boolean;
  /** All addresses of a host name (default: the system resolver, every answer). */
  resolve?: (host: string) => Promise<string[]>;
  /**
   * TESTS ONLY: exact `address:port` destinations allowed although `isBlocked` says no (e.g. one loopback fake
   * server). Set programmatically by tests, never from settings.
   */
  allowForTests?: string[];
}

export interface EgressProxy {
  /** `host:port — reason` of every destination refused so far. */
  refused: string[];
  close(): Promise<void>;
}

const systemResolve = async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Hop-by-hop and proxy headers that must not travel on. */
const HOP = new Set(['connection', 'proxy-connection', 'proxy-authorization', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/**
 * An HTTP(S) proxy on a unix socket, the only way out of a download's network namespace. It resolves every
 * destination itself, checks every DNS answer (one blocked answer refuses the name: no rebinding between check and
 * use) and connects to the address it checked. Redirects come back to the downloader, whose next request is checked
 * again here. `CONNECT host:port` carries HTTPS; absolute-URI requests carry plain HTTP.
 *
 * @example
 * const proxy = await openEgressProxy('/tmp/jail-x/egress.sock', { isBlocked: isPrivateAddress });
 */
export async function openEgressProxy(socketPath: string, policy: EgressPolicy): Promise<EgressProxy> {
  const refused: string[] = [];
  const resolve = policy.resolve ?? systemResolve;

  /** The checked address to connect to, or throws with the reason. */
  const destination = async (rawHost: string, port: number): Promise<string> => {
    const host = rawHost.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
    if (!host || !Number.isInteger(port) || port < 1 || port > 65535) throw new Error('not a valid destination');
    const addresses = net.isIP(host) ? [host] : await resolve(host).catch(() => [] as string[]);
    if (!addresses.length) throw new Error('the name does not resolve');
    for (const address of addresses) {
      const allowed = policy.allowForTests?.includes(`${address}:${port}`) || policy.allowForTests?.includes(`[${address}]:${port}`);
      if (policy.isBlocked(address) && !allowed) throw new Error(`${address} is a local or private address`);
    }
    return addresses[0]!;
  };
  const refuse = (target: string, err: unknown) => refused.push(`${target} — ${(err as Error).message}`);

  const server = http.createServer((req, res) => {
    void (async () => {
      let url: URL;
      try {
        url = new URL(req.url ?? '');
        if (url.protocol !== 'http:') throw new Error('only http:// goes through as a plain request');
      } catch (err) {
        refuse(req.url ?? '?', err);
        res.writeHead(400).end();
        return;
      }
      const port = Number(url.port || 80);
      let address: string;
      try {
        address = await destination(url.hostname, port);
      } catch (err) {
        refuse(`${url.host}`, err);
        res.writeHead(403, { 'content-type': 'text/plain' }).end('refused by the egress guard\n');
        return;
      }
      const headers: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(req.headers)) if (!HOP.has(name) && value !== undefined) headers[name] = value;
      headers.host = url.host;
      const upstream = http.request({ host: address, port, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false }, (answer) => {
        const back: http.OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers)) if (!HOP.has(name) && value !== undefined) back[name] = value;
        res.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(res);
      });
      upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
      req.pipe(upstream);
    })();
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    client.on('error', () => undefined);
    void (async () => {
      const target = req.url ?? '';
      const at = target.lastIndexOf(':');
      let address: string;
      const port = Number(target.slice(at + 1));
      try {
        if (at < 1) throw new Error('not host:port');
        address = await destination(target.slice(0, at), port);
      } catch (err) {
        refuse(target, err);
        client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
        return;
      }
      const upstream = net.connect({ host: address, port }, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
    })();
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(socketPath, () => ok());
  });
  return {
    refused,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

/**
 * Runs inside the jail in front of the downloader: listens on 127.0.0.1 of the run's own (otherwise empty) network
 * namespace and forwards each connection to the egress proxy's unix socket, then runs the downloader with that proxy
 * (`@EGRESS_PROXY@` in its arguments, and the proxy variables for the ffmpeg it starts) and exits with its code.
 */
export const FORWARDER = `
import os, socket, subprocess, sys, threading
target = os.environ.pop('EGRESS_SOCKET')
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.bind(('127.0.0.1', 0))
server.listen(64)
proxy = 'http://127.0.0.1:%d' % server.getsockname()[1]
def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
def serve():
    while True:
        client, _ = server.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(target)
        except OSError:
            client.close()
            continue
        threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
threading.Thread(target=serve, daemon=True).start()
env = dict(os.environ, http_proxy=proxy, https_proxy=proxy, HTTP_PROXY=proxy, HTTPS_PROXY=proxy, no_proxy='', NO_PROXY='')
args = [a.replace('@EGRESS_PROXY@', proxy) for a in sys.argv[1:]]
sys.stdout.flush()
sys.exit(subprocess.call(args, env=env))
`;
