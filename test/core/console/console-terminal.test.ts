import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { startInPty } from '../../helpers/pty.js';
import { ROOT, runChat, tempDir, writeConfig } from '../../helpers/checkout.js';

const WRONG_KEY = 'sk-terminal-wrong-key-4242';

/**
 * A gateway on 127.0.0.1 whose start-check request waits until the test lets it answer (then: the key is rejected),
 * so the warning it causes arrives while the console's prompt is on the screen.
 */
async function heldProbeGateway(): Promise<{ url: string; probed: Promise<void>; answerProbe(): void; close(): Promise<void> }> {
  let answer!: () => void;
  const released = new Promise<void>((resolve) => (answer = resolve));
  let probed!: () => void;
  const seen = new Promise<void>((resolve) => (probed = resolve));
  const server = http.createServer((req, res) => {
    req.resume();
    if (req.method === 'POST' && req.headers['x-wa-bot-probe'] === 'startup') {
      probed();
      void released.then(() => res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } })));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    probed: seen,
    answerProbe: answer,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('console chat: the log stays out of the chat in a terminal', function () {
  this.timeout(60_000);
  const closing: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });

  it('in a real terminal: info lines go to data/logs/chat.log (said at start), a warning shows above the prompt and what was typed stays', async () => {
    const gateway = await heldProbeGateway();
    closing.push(gateway.close);
    const dir = await tempDir();
    await writeConfig(dir);
    const t = startInPty([process.execPath, path.join(ROOT, 'dist', 'cli', 'chat.js')], { cwd: dir, env: { API_KEY: WRONG_KEY, BASE_URL: gateway.url, MODEL: 'm', HOME: dir } });
    closing.push(async () => {
      if (t.child.exitCode === null) t.child.kill('SIGKILL');
    });
    await t.waitFor(/console: the log goes to data\/logs\/chat\.log; only warnings and errors show here/);
    await t.waitFor(/you> $/);
    await gateway.probed;
    // Half a command typed, then the start check's warning arrives.
    t.type('.pi');
    await t.waitFor(/\.pi$/);
    gateway.answerProbe();
    // The prompt line is wiped (erase line, cursor to column 1), the warning written, and the prompt drawn again
    // with what was typed.
    await t.waitFor(/start check ✘ second \(m\): the gateway rejected the key[^\n]*\n(?:[^\n]*\n)*you> \.pi$/);
    expect(t.raw()).to.match(/you> (?:\x1b\[\d+G)?\.pi\x1b\[2K\x1b\[1G[^\n]*WARN[^\n]*start check ✘ second/);
    // The rest of the command goes on the redrawn line: the bot gets ".ping" whole.
    t.type('ng\r');
    await t.waitFor(/bot> pong \(\d+ ms\)[^\n]*\n[^\n]*you> $/);
    // The answer came while the prompt waited (a terminal merges quick lines, so the prompt is back at once): it too
    // is written over the wiped prompt line, never after "you> ".
    expect(t.raw()).to.match(/you> (?:\x1b\[\d+G)?\x1b\[2K\x1b\[1Gbot> pong \(\d+ ms\)\r?\n/);
    t.type(':quit\r');
    expect(await t.exited).to.equal(0);

    const screen = t.screen();
    // Info lines are not on the screen; they are in the file, with the warning.
    for (const info of ['console chat ready', 'start report', 'account files']) expect(screen).not.to.include(info);
    const file = path.join(dir, 'data', 'logs', 'chat.log');
    const lines = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.some((l) => l.level === 30 && l.msg === 'console chat ready')).to.equal(true);
    expect(lines.some((l) => l.level === 40 && /^start check ✘ second/.test(l.msg))).to.equal(true);
    expect((await stat(file)).mode & 0o777).to.equal(0o600);
    expect(await readFile(file, 'utf8')).not.to.include(WRONG_KEY);
    expect(t.raw()).not.to.include(WRONG_KEY);
  });

  it('piped, the console protocol is unchanged: only bot lines on stdout, the whole log on stderr, no log file', async () => {
    const dir = await tempDir();
    await writeConfig(dir);
    const run = await runChat('.ping\n:as 628123\n.nosuch\n', { cwd: dir, env: { API_KEY: 'x', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' } });
    expect(run.code).to.equal(0);
    expect(run.stdout).to.match(/^bot> pong \(\d+ ms\)\nbot> Unknown command \.nosuch\. [^\n]*\n$/);
    expect(run.stderr).to.include('console chat ready').and.to.include('start report');
    expect(run.stderr).not.to.include('the log goes to');
    expect(existsSync(path.join(dir, 'data', 'logs'))).to.equal(false);
  });
});
