import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestBot, type ModelRequest, type TestBot } from '../../../app/testing/index.js';
import mcp from '../../../plugins/mcp/index.js';
import { LineBuffer } from '../../../plugins/mcp/line-buffer.js';

/*
 * A stdio MCP server (a command the owner runs) is read one line, one message, at a time: each message is bounded as
 * over HTTP (8 MB). A real child process answers a tool call with a 9 MB message and, next, with a line that never ends
 * (512 MB on offer): both are cut off at the bound, the call fails saying so, the server is stopped and restarted, and
 * its tools work again.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const FLOODER = path.join(here, 'flood-server.js');
const OWNER = '10000000001';
const OWNER2 = '10000000009';
const MB = 1024 * 1024;

describe('mcp plugin over stdio: each message bounded by the bytes received', function () {
  this.timeout(60_000);
  let dir: string;
  let bot: TestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('a 9 MB message and an endless line are cut off at 8 MB, the server is restarted, and its tools answer again', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'mcp-stdio-flood-'));
    const written = path.join(dir, 'written.txt');
    const starts = path.join(dir, 'starts.txt');
    const file = path.join(dir, 'mcp.json');
    await writeFile(file, JSON.stringify({ mcpServers: { flooder: { command: process.execPath, args: [FLOODER], env: { WRITTEN_FILE: written, STARTS_FILE: starts }, timeoutMs: 30_000 } } }));
    bot = await startTestBot(mcp, {
      options: { restartBackoffMs: 50, maxRestartBackoffMs: 200, startWaitMs: 60_000 },
      config: { owners: [OWNER, OWNER2] },
      env: { MCP_CONFIG: file },
      model: (request: ModelRequest) => {
        const last = request.messages.at(-1);
        if (last?.role === 'tool') return `tool said: ${String(last.content)}`;
        const asked = String(request.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
        if (/nine/.test(asked)) return { tool: 'flooder__flood', args: { bytes: 9 * MB, complete: true } };
        if (/endless/.test(asked)) return { tool: 'flooder__flood', args: {} };
        return { tool: 'flooder__hello', args: { name: 'again' } };
      },
    });
    const up = (n: number) => bot!.until(() => bot!.logs().filter((l) => /MCP server "flooder" is up/.test(l.msg)).length >= n);
    const cutOff = /The tool "flood" of the MCP server "flooder" failed: sent a message larger than 8 MB; it was cut off unread\./;

    // One well-formed message of 9 MB: past the bound, never handed on (a bound of 10 MB would let it through).
    const [nine] = await bot.send('nine megabytes please');
    assert.match(nine, cutOff);
    await up(2);

    const memoryBefore = process.memoryUsage();
    const [endless] = await bot.send({ text: 'endless please', senderId: `${OWNER2}@s.whatsapp.net` });
    assert.match(endless, cutOff);
    await up(3);
    const counts = (await readFile(written, 'utf8')).trim().split('\n').map(Number);
    // What the server got written of the endless line: the bound plus what the pipe holds, not the 512 MB on offer.
    assert.equal(counts.length, 2, `one report per flood: ${counts.join(', ')}`);
    assert.ok(counts[1]! < 32 * MB, `the endless line ran to ${counts[1]} bytes before the server was stopped`);
    const memoryAfter = process.memoryUsage();
    const grown = memoryAfter.heapUsed + memoryAfter.arrayBuffers - memoryBefore.heapUsed - memoryBefore.arrayBuffers;
    assert.ok(grown < 64 * MB, `memory grew by ${grown} bytes`);

    // Restarted, and usable again (from a third chat: the others' answers repeated the server's words).
    const [hello] = await bot.send({ text: 'hello?', senderId: '10000000001@s.whatsapp.net', chatId: '10000000001@s.whatsapp.net' });
    assert.match(hello, /hello again from pid \d+/);
    assert.equal((await readFile(starts, 'utf8')).trim().split('\n').length, 3);
    assert.ok(bot.logs().some((l) => l.msg === 'MCP server "flooder" sent a message larger than 8 MB; it was cut off unread; it is closed and restarted'));
  });
});

describe('mcp plugin: the stdio line reader', () => {
  const parse = (line: string) => JSON.parse(line) as never;
  it('gives whole messages in order, however the lines are cut into chunks, and takes \\r\\n', () => {
    const buffer = new LineBuffer(64, parse);
    buffer.append(Buffer.from('{"a":1}\n{"b"'));
    buffer.append(Buffer.from(':2}\r\n{"c":3}\n{"d"'));
    assert.deepEqual([buffer.readMessage(), buffer.readMessage(), buffer.readMessage(), buffer.readMessage()], [{ a: 1 }, { b: 2 }, { c: 3 }, null]);
    buffer.append(Buffer.from(':4}\n'));
    assert.deepEqual(buffer.readMessage(), { d: 4 });
  });
  it('refuses a line longer than its bound, dropping what it held, and reads the next line after it', () => {
    const buffer = new LineBuffer(16, parse);
    buffer.append(Buffer.from('{"a":"0123456'));
    assert.throws(() => buffer.append(Buffer.from('789abcdef')), /exceeded maximum size of 16 bytes/);
    assert.equal(buffer.readMessage(), null);
    // A chunk whose line ends within the bound is taken, even when what follows it is long.
    buffer.append(Buffer.from('{"b":2}\n'));
    buffer.append(Buffer.from('{"c":3}\n{"d":4}'));
    assert.deepEqual([buffer.readMessage(), buffer.readMessage(), buffer.readMessage()], [{ b: 2 }, { c: 3 }, null]);
  });
});
