import { lookup } from 'node:dns/promises';
import http from 'node:http';
import type https from 'node:https';
import { createRequire } from 'node:module';
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import type { EgressPolicy } from './egress-proxy.js';
import { isPrivateAddress } from './private-address.js';
import { DownloadRefused } from '../../api/errors.js';

export interface PublicFetchOptions {
  /** Bytes at most; a larger answer is refused mid-way (default 10 MB). */
  maxBytes?: number;
  /** The whole fetch, every redirect and a slow trickle of bytes included, ends by then (default 30 s). */
  timeoutMs?: number;
  /** Request headers (a user agent, what is accepted). */
  headers?: Record<string, string>;
  /** Redirects followed at most, each destination checked again (default 3). */
  maxRedirects?: number;
  /** The same policy the jail's egress proxy uses (default: refuse `isPrivateAddress`, system resolver). */
  policy?: EgressPolicy;
  /** A body to POST instead of a GET (an outbound webhook); a redirect is then an answer, never followed. */
  body?: string | Buffer;
}

/** Why a request was stopped by us, so whichever error event comes first reports that reason, not "aborted". */
const stopReason = new WeakMap<http.ClientRequest, Error>();
function stopRequest(request: http.ClientRequest, reason: Error): void {
  if (!stopReason.has(request)) stopReason.set(request, reason);
  request.destroy(reason);
}

const systemResolve = async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * GETs (or, with `body`, POSTs) an http(s) URL from the bot's own process under the egress rules of the jail's proxy: every DNS answer of the
 * host is checked (one private answer refuses the name) and the connection goes to the address that was checked, so
 * a name cannot rebind between check and use; every redirect is checked again; the body is capped.
 *
 * @example
 * const { body, contentType } = await fetchPublic('https://cdn.example.com/picture.png', { maxBytes: 8_000_000 });
 */
export async function fetchPublic(rawUrl: string, options: PublicFetchOptions = {}): Promise<{ body: Buffer; contentType: string; url: string }> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  // One deadline for the whole fetch: a socket timeout alone would let a server that sends a byte now and then run on.
  let current: http.ClientRequest | undefined;
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    if (current) stopRequest(current, new DownloadRefused('the download timed out'));
  }, timeoutMs);
  try {
    return await fetchWithin(rawUrl, options, (request) => {
      if (expired) stopRequest(request, new DownloadRefused('the download timed out'));
      current = request;
    });
  } finally {
    clearTimeout(timer);
  }
}

/** node:https, loaded at the first https download (with TLS, ~15 ms that a start would pay before "ready"). */
function httpsClient(): typeof https {
  return createRequire(import.meta.url)('node:https') as typeof https;
}

async function fetchWithin(rawUrl: string, options: PublicFetchOptions, track: (request: http.ClientRequest) => void): Promise<{ body: Buffer; contentType: string; url: string }> {
  const policy = options.policy ?? { isBlocked: isPrivateAddress };
  const resolve = policy.resolve ?? systemResolve;
  const maxBytes = options.maxBytes ?? 10_000_000;
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new DownloadRefused('not a valid link');
  }
  for (let hop = 0; hop <= (options.maxRedirects ?? 3); hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DownloadRefused(`only http(s) links are fetched, not ${url.protocol}`);
    if (url.username || url.password) throw new DownloadRefused('links with a user name or password are not fetched');
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const addresses = net.isIP(host) ? [host] : await resolve(host).catch(() => [] as string[]);
    if (!addresses.length) throw new DownloadRefused(`${host} does not resolve`);
    for (const address of addresses) {
      const allowed = policy.allowForTests?.includes(`${address}:${port}`) || policy.allowForTests?.includes(`[${address}]:${port}`);
      if (policy.isBlocked(address) && !allowed) throw new DownloadRefused(`${host} is a local or private address`);
    }
    const checked = addresses[0]!;
    // Connect to the address checked above, whatever the resolver would say now.
    const pinned: LookupFunction = (_name, opts, callback) => {
      const family = net.isIP(checked);
      if ((opts as { all?: boolean }).all) (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: checked, family }]);
      else callback(null, checked, family);
    };
    const answer = await new Promise<{ status: number; location?: string; body: Buffer; contentType: string }>((resolveAnswer, reject) => {
      const client = url.protocol === 'https:' ? httpsClient() : http;
      const requestOptions = { lookup: pinned, timeout: options.timeoutMs ?? 30_000, headers: options.headers, method: options.body === undefined ? 'GET' : 'POST' };
      const request = client.request(url, requestOptions, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400 && options.body === undefined) {
          res.resume();
          resolveAnswer({ status, location: res.headers.location, body: Buffer.alloc(0), contentType: '' });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            stopRequest(request, new DownloadRefused(`the file is larger than ${maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => resolveAnswer({ status, body: Buffer.concat(chunks), contentType: String(res.headers['content-type'] ?? '') }));
        res.on('error', (err) => reject(stopReason.get(request) ?? err));
      });
      request.on('timeout', () => stopRequest(request, new DownloadRefused('the download timed out')));
      request.on('error', (err) => reject(stopReason.get(request) ?? err));
      track(request);
      request.end(options.body);
    });
    if (answer.location !== undefined) {
      url = new URL(answer.location, url);
      continue;
    }
    if (answer.status < 200 || answer.status >= 300) throw new DownloadRefused(`the server answered HTTP ${answer.status}`);
    return { body: answer.body, contentType: answer.contentType, url: url.href };
  }
  throw new DownloadRefused('too many redirects');
}
