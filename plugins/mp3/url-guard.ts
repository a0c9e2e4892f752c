import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { isPrivateAddress } from '../../core/media.js';

export { isPrivateAddress };

/** A link the bot refuses to fetch; the message is meant for the user. */
export class UrlRefused extends Error {}

export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Reads a link from chat text. A link without a scheme (`youtu.be/abc`) gets `https://`.
 * Returns undefined for text that is not a link.
 *
 * @example
 * parseLink('youtu.be/abc')?.href; // 'https://youtu.be/abc'
 * parseLink('hello'); // undefined
 */
export function parseLink(text: string): URL | undefined {
  const candidate = text.trim().replace(/^<(.*)>$/, '$1');
  if (!candidate || /\s/.test(candidate)) return undefined;
  const withScheme = /^[a-z][a-z0-9+.-]*:/i.test(candidate) ? candidate : /^[\w-]+(\.[\w-]+)+(:\d+)?(\/|$)/.test(candidate) ? `https://${candidate}` : undefined;
  if (!withScheme) return undefined;
  try {
    return new URL(withScheme);
  } catch {
    return undefined;
  }
}

/** True when the text looks like a link (with or without scheme), to tell a link from a title. */
export function looksLikeLink(text: string): boolean {
  return /^<?[a-z][a-z0-9+.-]*:\/\//i.test(text.trim()) || parseLink(text) !== undefined;
}

/**
 * Checks a link before anything fetches it (server-side request forgery guard): only http(s), no user:password,
 * and the host must be public — a literal private/loopback/link-local address, `localhost`, or a name that resolves
 * (any of its addresses) to one is refused. Throws UrlRefused with a message for the user.
 *
 * This is the early, clear refusal; what holds is the jail's egress proxy, which checks every connection yt-dlp
 * makes (redirects and each DNS answer included) with `isPrivateAddress`.
 *
 * @example
 * const url = await checkLink('https://youtu.be/dQw4w9WgXcQ');
 * await checkLink('http://127.0.0.1:8080/'); // throws UrlRefused
 */
export async function checkLink(text: string, options: { allowPrivateHosts?: boolean; resolve?: Resolver } = {}): Promise<URL> {
  const url = parseLink(text);
  if (!url) throw new UrlRefused(`"${text.slice(0, 80)}" is not a link. Send a full link such as https://youtu.be/…`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlRefused(`I only fetch http and https links, not ${url.protocol.replace(':', '')}: links.`);
  if (url.username || url.password) throw new UrlRefused('I do not fetch links that carry a user name or password.');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
  if (!host) throw new UrlRefused('That link has no host name.');
  if (options.allowPrivateHosts) return url;
  const refusal = `I can't fetch ${host}: it is a local or private network address, and I only download from public sites.`;
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) throw new UrlRefused(refusal);
  if (net.isIP(host)) {
    if (isPrivateAddress(host)) throw new UrlRefused(refusal);
    return url;
  }
  let addresses: string[];
  try {
    addresses = await (options.resolve ?? systemResolver)(host);
  } catch {
    throw new UrlRefused(`I can't find the site ${host} (its name does not resolve). Check the link.`);
  }
  if (!addresses.length) throw new UrlRefused(`I can't find the site ${host} (its name does not resolve). Check the link.`);
  if (addresses.some(isPrivateAddress)) throw new UrlRefused(refusal);
  return url;
}
