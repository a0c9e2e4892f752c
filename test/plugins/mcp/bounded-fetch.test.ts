import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { boundedFetch } from '../../../plugins/mcp/bounded-fetch.js';

const REQUEST = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'x' } });
const REASON = /the MCP server "srv" sent a message larger than 1000 bytes; it was cut off unread/;

/** The bound is per message: a stream carries any number of messages within it, and only one past it is cut. */
describe('mcp plugin: each message of an MCP answer bounded by the bytes received', () => {
  let web: Server;
  let url: string;
  let answer: (res: ServerResponse, req: IncomingMessage) => void;
  before(async () => {
    web = createServer((req, res) => answer(res, req));
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(web.address() as AddressInfo).port}/`;
  });
  after(() => new Promise((r) => web.close(r)));

  const post = () => boundedFetch('srv', 1000)(url, { method: 'POST', body: REQUEST });

  it('passes a stream of many events each within the bound, whatever their total and line ends', async () => {
    const events = Array.from({ length: 200 }, (_, i) => `id: ${i}\ndata: ${'x'.repeat(400)}`);
    const ends = ['\n\n', '\r\n\r\n', '\r\r', '\n\r\n'];
    const body = events.map((e, i) => e.replace(/\n/g, ends[i % 4].slice(0, ends[i % 4].length / 2)) + ends[i % 4]).join('');
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Written in odd slices, so events and line ends are split across chunks.
      for (let at = 0; at < body.length; at += 333) res.write(body.slice(at, at + 333));
      res.end();
    };
    const text = await (await post()).text();
    assert.equal(text, body);
  });

  it('turns an event past the bound (however it is split in lines) into an error answer for the request, and reads no further', async () => {
    let written = 0;
    // One event of endless short data lines: each line is small, the event is not.
    const lines = Buffer.from(`data: ${'A'.repeat(93)}\n`.repeat(640));
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"small":1}\n\n');
      const more = () => {
        while (written < 64 * 1024 * 1024 && res.write(lines)) written += lines.length;
        if (written >= 64 * 1024 * 1024) res.end();
      };
      res.on('drain', more);
      more();
    };
    const closed = new Promise<void>((r) => web.once('request', (_req, res: ServerResponse) => res.once('close', r)));
    const text = await (await post()).text();
    await closed;
    const [first, second, rest] = text.split('\n\n');
    assert.equal(first, 'data: {"small":1}');
    assert.match(second, /^event: message\ndata: /);
    const error = JSON.parse(second.split('data: ')[1]);
    assert.equal(error.id, 7);
    assert.match(error.error.message, REASON);
    assert.equal(rest, '');
    assert.ok(written < 16 * 1024 * 1024, `the server got ${written} bytes written`);
  });

  it('passes a JSON answer within the bound whole, and turns one past it into an error answer', async () => {
    const small = JSON.stringify({ jsonrpc: '2.0', id: 7, result: { text: 'y'.repeat(900) } });
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(small);
    assert.equal(await (await post()).text(), small);
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ jsonrpc: '2.0', id: 7, result: { text: 'y'.repeat(1000) } }));
    const error = await (await post()).json();
    assert.equal(error.id, 7);
    assert.match(error.error.message, REASON);
  });

  it("reads only the first words of an error answer's body", async () => {
    answer = (res) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`boom ${'z'.repeat(100_000)}`);
    const response = await post();
    assert.equal(response.status, 500);
    const text = await response.text();
    assert.ok(text.startsWith('boom ') && text.length === 16 * 1024, `${text.length} characters`);
  });
});
