import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import Database from 'libsql';
import path from 'node:path';
import { completion, FakeGateway, lastUserText } from '../../fakes/openai-gateway.js';
import { startLiveChat } from '../../helpers/live-chat.js';
import { filesUntil } from '../../helpers/files-until.js';
import { ROOT, tempDir, writeConfig } from '../../helpers/checkout.js';
import { storedHistory } from '../../helpers/disk-text.js';

/** A gateway whose answers wait until the test lets them go; `received` resolves at the first request. */
async function heldGateway() {
  let received!: () => void;
  let release!: () => void;
  const receivedP = new Promise<void>((resolve) => (received = resolve));
  const releaseP = new Promise<void>((resolve) => (release = resolve));
  const gw = await FakeGateway.start('slow', () => async (req) => {
    received();
    await releaseP;
    return { status: 200, json: completion(`slow: ${lastUserText(req)}`) };
  });
  return { gw, received: receivedP, release };
}

const envFor = (gw: FakeGateway) => ({ API_KEY: 'test-key-123456', BASE_URL: gw.url, MODEL: 'm', UPSTREAM_TIMEOUT_MS: '60000' });

async function historyTexts(dataDir: string): Promise<string[]> {
  // A message is on disk once it is a row of the chat's history in the store database (or its WAL).
  return storedHistory(dataDir).map((e) => e.text);
}

/**
 * A spawned console chat on a gateway whose answers wait until released (see heldGateway), ready to chat; killed,
 * released and closed after `run`, whatever happened.
 */
async function withHeldChat(config: Record<string, unknown> | undefined, run: (chat: ReturnType<typeof startLiveChat>, held: Awaited<ReturnType<typeof heldGateway>> & { dir: string }) => Promise<void>): Promise<void> {
  const dir = await tempDir();
  await writeConfig(dir, config);
  const held = await heldGateway();
  const chat = startLiveChat({ cwd: dir, env: envFor(held.gw) });
  try {
    await chat.waitForLog(/console chat ready/);
    await run(chat, { ...held, dir });
  } finally {
    held.release();
    chat.child.kill('SIGKILL');
    await held.gw.close();
  }
}

describe('clean stop (spawned console)', function () {
  // Spawned console chats (a whole start of the bot): seconds on a quiet machine, but more than the suite's 20 s on a
  // loaded one. The limit is only a safety net.
  this.timeout(120_000);
  it('SIGTERM during a slow answer: the answer is sent, history saved, a new message is not taken, exit 0', () =>
    withHeldChat(undefined, async (chat, { gw, received, release, dir }) => {
      chat.send('hello there');
      await received;
      chat.child.kill('SIGTERM');
      await chat.waitForLog(/SIGTERM: stopping/);
      // Arrives while stopping: must not be handled. It is in the pipe before the answer is let go, so a console still
      // taking lines reads it before the answer comes back and the stop ends.
      await new Promise<void>((resolve, reject) => chat.child.stdin.write('.ping\n', (err) => (err ? reject(err) : resolve())));
      release();
      const { code } = await chat.exited;
      expect(chat.lines()).to.deep.equal(['bot> slow: hello there']);
      expect(code, chat.stderr()).to.equal(0);
      const texts = await historyTexts(path.join(dir, 'data'));
      expect(texts).to.include('hello there').and.include('slow: hello there');
      expect(gw.chats()).to.have.length(1);
    }));

  it('gives up on an answer that outlasts shutdown.graceSeconds and still exits', () =>
    withHeldChat({ shutdown: { graceSeconds: 1 } }, async (chat, { received }) => {
      chat.send('never answered');
      await received;
      chat.child.kill('SIGTERM');
      const { code } = await chat.exited;
      expect(code, chat.stderr()).to.equal(0);
      expect(chat.stderr()).to.match(/1 message\(s\) were still being handled/);
      expect(chat.lines()).to.deep.equal([]);
    }));

  it('a second signal exits at once', () =>
    withHeldChat(undefined, async (chat, { received }) => {
      chat.send('slow one');
      await received;
      chat.child.kill('SIGINT');
      await chat.waitForLog(/SIGINT: stopping/);
      chat.child.kill('SIGINT');
      const { code } = await chat.exited;
      expect(code).to.equal(130);
      expect(chat.stderr()).to.match(/Second SIGINT while stopping: exiting at once/);
      expect(chat.lines()).to.deep.equal([]);
    }));

  it('a store that cannot be written makes the exit code non-zero and names it', async () => {
    const dir = await tempDir();
    await writeConfig(dir);
    const gw = await FakeGateway.start('quick');
    const chat = startLiveChat({ cwd: dir, env: envFor(gw) });
    try {
      await chat.waitForLog(/console chat ready/);
      chat.send('first turn');
      await chat.waitForLine(/^bot> quick: first turn/);
      await filesUntil(path.join(dir, 'data'), async () => (await historyTexts(path.join(dir, 'data'))).includes('quick: first turn'), 'the first turn in the history');
      // Now the store database refuses every write of the history (as a full disk would): nothing of it lands.
      const db = new Database(path.join(dir, 'data', 'store.db'));
      try {
        for (const op of ['INSERT', 'UPDATE', 'DELETE']) db.exec(`CREATE TRIGGER refuse_${op} BEFORE ${op} ON "chat-log:core:history" BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;`);
      } finally {
        db.close();
      }
      chat.send('second turn');
      await chat.waitForLine(/^bot> quick: second turn/);
      chat.child.kill('SIGTERM');
      const { code } = await chat.exited;
      expect(code, chat.stderr()).to.equal(1);
      expect(chat.stderr()).to.match(/Stopped, but not cleanly: .*could not be saved.*history/);
    } finally {
      chat.child.kill('SIGKILL');
      await gw.close();
    }
  });

  it('Ctrl-C in an interactive console (a real terminal) stops it cleanly like SIGINT', async function () {
    const { spawnSync, spawn } = await import('node:child_process');
    if (spawnSync('script', ['--version']).status !== 0) this.skip(); // util-linux `script` gives the console a terminal
    const dir = await tempDir();
    await writeConfig(dir);
    const chatJs = path.join(ROOT, 'dist', 'cli', 'chat.js');
    const child = spawn('script', ['-qfec', `"${process.execPath}" "${chatJs}"`, '/dev/null'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', API_KEY: 'k-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm', TERM: 'dumb' },
    });
    let out = '';
    const watchers = new Set<() => void>();
    const more = (d: Buffer) => {
      out += d;
      for (const watch of [...watchers]) watch();
    };
    child.stdout.on('data', more);
    child.stderr.on('data', more);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    /** Resolves once the terminal showed `pattern`; fails with what it showed after 30 s. */
    const seen = (pattern: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => (watchers.delete(watch), reject(new Error(`not shown: ${pattern}\n${out}`))), 30_000);
        const watch = () => pattern.test(out) && (watchers.delete(watch), clearTimeout(timer), resolve());
        watchers.add(watch);
        watch();
      });
    try {
      // In a terminal the log goes to data/logs/chat.log; the chat shows the prompt once the console is ready.
      await seen(/you> /);
      child.stdin.write('.ping\r');
      await seen(/pong \(\d+ ms\)/);
      child.stdin.write('\x03');
      expect(await exited).to.equal(0);
      const log = await readFile(path.join(dir, 'data', 'logs', 'chat.log'), 'utf8');
      expect(log).to.match(/SIGINT: stopping/).and.match(/stopped cleanly/);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
