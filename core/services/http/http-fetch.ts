import type http from 'node:http';
import type https from 'node:https';
import { createRequire } from 'node:module';

/** Statuses a gateway that moved answers with: the request is asked again through the SDK (fetch follows them). */
export const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * The chat legs' connections (chat-post.ts): kept open between requests, as fetch keeps them, and closed after 4 s
 * idle as fetch closes them (or earlier, when the upstream's Keep-Alive header says it hangs up sooner: node's agent
 * honours that hint only under a timeout of its own). Without one, an idle connection the upstream closed meanwhile would be reused, and the next
 * answer fail as a reset.
 */
const IDLE_MS = 4_000;
let plain: { client: typeof http; agent: http.Agent } | undefined;
let secure: { client: typeof https; agent: https.Agent } | undefined;

/**
 * node:http loaded at the first request (nothing before "ready" needs Node's HTTP client and server, nine of its
 * modules), node:https at the first https request (with TLS, ~15 ms that a start need not pay).
 */
export function transportFor(protocol: string): { client: typeof http | typeof https; agent: http.Agent } {
  if (protocol !== 'https:') {
    if (!plain) {
      const client = createRequire(import.meta.url)('node:http') as typeof http;
      plain = { client, agent: new client.Agent({ keepAlive: true, timeout: IDLE_MS }) };
    }
    return plain;
  }
  if (!secure) {
    const client = createRequire(import.meta.url)('node:https') as typeof https;
    secure = { client, agent: new client.Agent({ keepAlive: true, timeout: IDLE_MS }) };
  }
  return secure;
}
