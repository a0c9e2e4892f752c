/**
 * The bench's fake OpenAI-compatible upstream, run in its own process (forked by `gateway.ts`) so its work does not
 * share the event loop with the bot or the floor client being measured: like a real upstream, it is somewhere else.
 * Two gateways on 127.0.0.1, port 0: `primary` and `second`. Each answers `GET /` with 200 (health probe) and
 * `POST /v1/chat/completions` at once with a fixed completion, or with a 429 when its mode says so.
 * Controlled over the IPC channel: see `GatewayRequest`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type GatewayName = 'primary' | 'second';
/** ok: answer; 429-short: rate limit with retry-after-ms 1; 429-long: rate limit with retry-after 60 s. */
export type GatewayMode = 'ok' | '429-short' | '429-long';

export type GatewayRequest =
  | { id: number; op: 'mode'; gateway: GatewayName; mode: GatewayMode }
  | { id: number; op: 'stats' }
  | { id: number; op: 'lastBody'; gateway: GatewayName }
  | { id: number; op: 'lastFoldBody'; gateway: GatewayName }
  | { id: number; op: 'folds' };

interface GatewayState {
  mode: GatewayMode;
  chats: number;
  lastBody: string;
  /** Chat-summary fold requests received, and the last one's body. */
  folds: number;
  lastFoldBody: string;
  server: http.Server;
  answer: string;
}

/** Words of the instructions of a chat-summary fold request (core/kernel/chat/chat-summary.ts). */
const FOLD_INSTRUCTIONS = 'running summary of a WhatsApp conversation';

const rateLimitBody = JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } });

function completionBody(name: GatewayName): string {
  return JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: 'bench-model',
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `${name}: here is a short answer for you.` } }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
}

function startGateway(name: GatewayName): Promise<GatewayState> {
  const state: GatewayState = { mode: 'ok', chats: 0, lastBody: '', folds: 0, lastFoldBody: '', server: undefined as unknown as http.Server, answer: completionBody(name) };
  state.server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`${name} ok`);
        return;
      }
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no route"}}');
        return;
      }
      state.chats++;
      const body = Buffer.concat(chunks).toString('utf8');
      // A chat-summary fold (history.summarize, shipped on) is the bot's own bookkeeping, not the answer the floors
      // replay: lastBody stays the last answer's request.
      if (!body.includes(FOLD_INSTRUCTIONS)) state.lastBody = body;
      else {
        state.folds++;
        state.lastFoldBody = body;
      }
      if (state.mode === 'ok') res.writeHead(200, { 'content-type': 'application/json' }).end(state.answer);
      else res.writeHead(429, { 'content-type': 'application/json', ...(state.mode === '429-short' ? { 'retry-after-ms': '1' } : { 'retry-after': '60' }) }).end(rateLimitBody);
    });
  });
  state.server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => state.server.listen(0, '127.0.0.1', () => resolve(state)));
}

const gateways: Record<GatewayName, GatewayState> = { primary: await startGateway('primary'), second: await startGateway('second') };
const urlOf = (g: GatewayState) => `http://127.0.0.1:${(g.server.address() as AddressInfo).port}`;

process.on('message', (msg: GatewayRequest) => {
  if (msg.op === 'mode') {
    gateways[msg.gateway].mode = msg.mode;
    process.send?.({ id: msg.id, result: true });
  } else if (msg.op === 'stats') {
    process.send?.({ id: msg.id, result: { primary: gateways.primary.chats, second: gateways.second.chats } });
  } else if (msg.op === 'lastBody') {
    process.send?.({ id: msg.id, result: gateways[msg.gateway].lastBody });
  } else if (msg.op === 'lastFoldBody') {
    process.send?.({ id: msg.id, result: gateways[msg.gateway].lastFoldBody });
  } else if (msg.op === 'folds') {
    process.send?.({ id: msg.id, result: { primary: gateways.primary.folds, second: gateways.second.folds } });
  }
});
// The parent going away (or closing the channel) ends this process: no orphan servers.
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true, urls: { primary: urlOf(gateways.primary), second: urlOf(gateways.second) } });
