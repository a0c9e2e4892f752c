import { expect } from 'chai';
import http from 'node:http';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { parseScopes } from '../../../core/operator.js';
import { MAX_MCP_BODY_BYTES } from '../../../web/automation/mcp-route.js';
import { startWebServer, type WebServer } from '../../../web/server.js';

/** One POST /mcp with a raw body, with its length declared or streamed (chunked, no length given). */
function post(port: number, secret: string, body: string, declared: boolean): Promise<{ status: number; connection?: string; json: any }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { authorization: `Bearer ${secret}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (declared) headers['content-length'] = Buffer.byteLength(body);
    const req = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the MCP server reads a request body up to its limit and no further', function () {
  this.timeout(60_000);
  let t: TestBot;
  let web: WebServer;
  let secret: string;

  before(async () => {
    t = await startTestBot([], { config: { owners: ['15550001111'], port: 0 } });
    web = await startWebServer(t.app, () => t.transport);
    secret = t.app.automation.tokens.create('agent', parseScopes('chats')).token;
  });
  after(async () => {
    await web?.close();
    await t?.stop();
  });

  it('reads a body of exactly the limit (then finds it is not JSON), and refuses one byte more, declared or streamed, closing the connection', async () => {
    const atLimit = await post(web.port, secret, 'x'.repeat(MAX_MCP_BODY_BYTES), false);
    expect([atLimit.status, atLimit.json.error.code, atLimit.json.error.message]).to.deep.equal([400, 'API_BAD_REQUEST', 'the body is not JSON-RPC (JSON)']);
    for (const declared of [true, false]) {
      const over = await post(web.port, secret, 'x'.repeat(MAX_MCP_BODY_BYTES + 1), declared);
      expect([over.status, over.json.error.code, over.connection], declared ? 'declared' : 'streamed').to.deep.equal([413, 'API_BODY_TOO_LARGE', 'close']);
    }
  });
});
