import { expect } from 'chai';
import { FakeGateway, failures } from '../../fakes/openai-gateway.js';
import { pathToFileURL } from 'node:url';
import { ROOT, runChat, tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat } from '../../helpers/console-chat.js';
import { startLiveChat, type LiveChat } from '../../helpers/live-chat.js';

const DEAD_UPSTREAM = { API_KEY: 'x', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' };
const BOT = '62899999999';

describe('console chat (spawned where the process is the subject: its output order, flush and exit)', () => {
  it('creates config.json from the example when it is missing and says so', async () => {
    const dir = await tempDir();
    // In this process (the app `npm run chat` builds): the start log is the subject, not the process.
    const run = await runConsoleChat('', { cwd: dir, env: { ...DEAD_UPSTREAM } });
    // The example's port is 3000 and may be taken; either way config.json must have been created and announced.
    expect(run.stderr).to.include('config.json was missing');
  });

  it('handles lines strictly in order and flushes every answer before exiting', async () => {
    const dir = await tempDir();
    await writeConfig(dir);
    const input = Array.from({ length: 40 }, (_, i) => (i % 2 ? '.ping' : '.nosuch' + i)).join('\n') + '\n';
    const run = await runChat(input, { cwd: dir, env: DEAD_UPSTREAM });
    expect(run.code).to.equal(0);
    expect(run.lines).to.have.length(40);
    run.lines.forEach((line, i) => expect(line).to.match(i % 2 ? /^bot> pong/ : new RegExp(`^bot> Unknown command \\.nosuch${i}\\.`)));
  });

  it('ends quietly when the reader of its output goes away', async () => {
    const dir = await tempDir();
    await writeConfig(dir);
    const { spawn } = await import('node:child_process');
    const path = await import('node:path');
    const { ROOT } = await import('../../helpers/checkout.js');
    const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'cli', 'chat.js')], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...DEAD_UPSTREAM }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.once('data', () => child.stdout.destroy());
    child.stdin.end('.ping\n'.repeat(300));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(stderr).not.to.include('EPIPE');
    expect(code).to.equal(0);
  });

  describe('one spawned chat for the protocol tests (each speaks as the operator in their private chat first)', function () {
    this.timeout(60_000);
    let chat: LiveChat;
    let ends = 0;
    before(async () => {
      const dir = await tempDir();
      // What each test needs of config.json: the bot's number as a mention (groups) and .ping for one id only (:as).
      await writeConfig(dir, { targetUserIds: [BOT], plugins: { ping: { enabled: true, access: ['62812345678'] } } });
      chat = startLiveChat({ cwd: dir, env: DEAD_UPSTREAM });
      await chat.waitForLog(/console chat ready/, 45_000);
    });
    after(async () => {
      expect(await chat.endInput(), chat.stderr()).to.equal(0);
    });

    /**
     * Sends `script` from the operator's private chat, then a line of its own the bot answers last: resolves with the
     * stdout lines the script caused (its answers, nothing before or after) and what stderr got meanwhile, once it
     * shows `stderrUntil`: stdout and stderr are separate pipes, so the last answer on stdout may arrive before the
     * stderr lines written ahead of it.
     */
    async function run(script: string[], stderrUntil?: RegExp): Promise<{ lines: string[]; stderr: string }> {
      const from = chat.lines().length;
      const errFrom = chat.stderr().length;
      const end = `.nosuchend${++ends}`;
      for (const line of [':as 10000000001', ':dm', ...script, ':as 10000000001', ':dm', end]) chat.send(line);
      const last = await chat.waitForLine(new RegExp(`^bot> Unknown command \\${end}\\.`), { from });
      if (stderrUntil) await chat.waitForLog(stderrUntil, 30_000, errFrom);
      const lines = chat.lines();
      return { lines: lines.slice(from, lines.indexOf(last, from)), stderr: chat.stderr().slice(errFrom) };
    }

    it('answers .ping with an upstream that refuses connections and prints only bot lines on stdout (the chat exits 0 at the end: after)', async () => {
      const { lines } = await run(['.ping']);
      expect(lines).to.have.length(1);
      expect(lines[0]).to.match(/^bot> pong \(\d+ ms\)$/);
      await chat.waitForLog(/web server listening on http:\/\/127\.0\.0\.1:\d+/);
    });

    it('is ready before it starts the web server and checks the upstream: neither holds up the first answer, both still report', async () => {
      await chat.waitForLog(/web server listening on http:\/\/127\.0\.0\.1:\d+/);
      await chat.waitForLog(/start check done: 0 of 1 upstream\(s\) answer/);
      await chat.waitForLog(/gateway second UNHEALTHY/);
      const log = chat.stderr();
      const ready = log.indexOf('console chat ready');
      expect(ready).to.be.greaterThan(log.indexOf('start report: works:'));
      // What nobody waits for comes after ready; a dead upstream is still named, with the setting to fix.
      expect(log.indexOf('web server listening on')).to.be.greaterThan(ready);
      expect(log.indexOf('start check ✘ second (m): cannot reach')).to.be.greaterThan(ready);
      expect(log.indexOf('gateway second UNHEALTHY')).to.be.greaterThan(ready);
    });

    it('in a group answers only when mentioned or replied to; :dm goes back to the private chat', async () => {
      const { lines } = await run([':group friends', '.ping', 'hello everyone', `@${BOT} .ping`, '@62811111111 .ping', ':reply .ping', ':dm', '.ping']);
      expect(lines).to.have.length(3);
      for (const line of lines) expect(line).to.match(/^bot> pong/);
    });

    it('knows its own console id for mentions, ignores e-mail addresses, answers a bare mention and .HELP in any case', async () => {
      const { lines } = await run([':group team', '@10000000000 .ping', 'write to foo@10000000000.com', '@10000000000', '@10000000000 .HELP']);
      expect(lines[0]).to.match(/^bot> pong/);
      expect(lines[1]).to.equal('bot> Yes? Ask me anything, or send .help for my commands.');
      expect(lines[2]).to.match(/^bot> \*Assistant\*: here is what I can do\./);
    });

    it('prints continuation lines of a multi-line answer indented by two spaces', async () => {
      const { lines } = await run(['.help']);
      expect(lines[0]).to.match(/^bot> /);
      expect(lines.length).to.be.greaterThan(2);
      for (const line of lines.slice(1)) expect(line.startsWith('  ')).to.equal(true);
      expect(lines.join('\n')).to.include('.ping');
    });

    it(':as switches the sender (and so the private chat); unknown console commands are reported on stderr', async () => {
      // (The console's own default sender counts as an owner, who may use everything: start as someone else.)
      const { lines, stderr } = await run([':as 62800000001', '.ping', ':as 62812345678', '.ping', ':bogus', ':as abc'], /:as needs digits/);
      expect(lines[0]).to.equal('bot> Sorry, you are not allowed to use .ping here.');
      expect(lines[1]).to.match(/^bot> pong/);
      expect(stderr).to.include('unknown console command :bogus');
      // Every : command is named (the banner lists the same).
      for (const command of [':as', ':group', ':dm', ':voice', ':audio', ':image', ':video', ':document', ':sticker', ':reply', ':quote', ':fromme', ':vote', ':sleep', ':quit']) expect(stderr).to.include(`${command}`);
      expect(stderr).to.include(':as needs digits');
    });
  });

  describe('with fake gateways', () => {
    let primary: FakeGateway;
    let second: FakeGateway;
    beforeEach(async () => {
      [primary, second] = await Promise.all([FakeGateway.start('primary'), FakeGateway.start('second')]);
    });
    afterEach(() => Promise.all([primary.close(), second.close()]));

    it('answers from the primary, then from the second gateway when the primary answers 429, and uses premium for one message', async () => {
      const dir = await tempDir();
      await writeConfig(dir);
      const env = {
        PRIMARY_GATEWAY_API_KEY: 'pk-1',
        PRIMARY_GATEWAY_BASE_URL: `${primary.url}/v1`,
        PRIMARY_GATEWAY_MODEL: 'main-a',
        PRIMARY_GATEWAY_PREMIUM_MODEL: 'premium-a',
        API_KEY: 'sk-2',
        BASE_URL: second.url,
        MODEL: 'main-b',
        PREMIUM_MODEL: 'premium-b',
      };
      primary.http.routes['POST /v1/chat/completions'] = (() => {
        const original = primary.http.routes['POST /v1/chat/completions'];
        let n = 0;
        return (req: Parameters<Extract<typeof original, Function>>[0]) => (++n === 2 ? failures.rateLimit(60) : (original as Function)(req));
      })();
      // In this process: the failover is the subject, not the process.
      const run = await runConsoleChat(['what is 2+2?', 'and 3+3?', 'use the premium model: and 4+4?', 'and 5+5?'].join('\n') + '\n', { cwd: dir, env });
      expect(run.code).to.equal(0);
      expect(run.lines).to.deep.equal(['bot> primary: what is 2+2?', 'bot> second: and 3+3?', 'bot> second: and 4+4?', 'bot> second: and 5+5?']);
      expect(second.chats().map((r) => r.json.model)).to.deep.equal(['main-b', 'premium-b', 'main-b']);
      expect(primary.chats()).to.have.length(2);
    });
  });
});

describe('console chat: messages to other chats (the console transport in this process)', () => {
  /** A plugin package in the temp folder's node_modules that sends to other chats, as reminders and notices do. */
  async function installTellPlugin(dir: string): Promise<void> {
    const { mkdir, writeFile } = await import('node:fs/promises');
    const path = await import('node:path');
    const pkg = path.join(dir, 'node_modules', 'tell-plugin');
    await mkdir(pkg, { recursive: true });
    await writeFile(path.join(pkg, 'package.json'), JSON.stringify({ name: 'tell-plugin', type: 'module', main: 'index.js' }));
    await writeFile(
      path.join(pkg, 'index.js'),
      `import { definePlugin } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'dist', 'core', 'index.js')).href)};
async function run(ctx) {
  const [to, ...rest] = ctx.args.split(' ');
  const word = ctx.command.word.slice(1);
  if (word === 'alert') return ctx.host.notices.raise('test-alert', ctx.args);
  const chat = to.includes('@') ? to : to + '@s.whatsapp.net';
  if (word === 'tell') await ctx.host.send(chat, rest.join(' '));
  else await ctx.host.sendMedia(chat, { kind: 'audio', path: rest.join(' '), mimetype: 'audio/mpeg' });
  await ctx.reply('done');
}
export default definePlugin({
  name: 'tell',
  description: 'sends to other chats',
  setup: () => ({ commands: ['tell', 'tellfile', 'alert'].map((command) => ({ command, run })) }),
});
`,
    );
  }

  it('prints bot [to <chat id>] for texts, media and owner notices sent to another chat, and bot> for the current chat', async () => {
    const dir = await tempDir();
    await installTellPlugin(dir);
    await writeConfig(dir, {
      pluginPackages: ['tell-plugin'],
      plugins: { tell: { enabled: true } },
      // The bot writes first only to owners, chats that wrote to it, and recipients an owner approved: 6281234567890 is an owner.
      owners: ['6281200000009', '6281234567890'],
      sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 },
    });
    const path = await import('node:path');
    // (A path the plugin names is taken as it is: the chat runs in this process, whose folder is not `dir`.)
    const script = [
      '.tell 6281234567890 see you at 5',
      '.tell 10000000001 to myself',
      `.tellfile 6281234567890 ${path.join(dir, 'song.mp3')}`,
      ':group friends',
      "@10000000000 .tell friends@g.us in the group",
      ':dm',
      '.alert the disk is almost full',
    ].join('\n') + '\n';
    const run = await runConsoleChat(script, { cwd: dir, env: { ...DEAD_UPSTREAM } });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.lines.slice(0, 8)).to.deep.equal([
      'bot [to 6281234567890@s.whatsapp.net] see you at 5',
      'bot> done',
      'bot> to myself',
      'bot> done',
      `bot [to 6281234567890@s.whatsapp.net] [audio] ${path.join(dir, 'song.mp3')}`,
      'bot> done',
      'bot> in the group',
      'bot> done',
    ]);
    expect(run.lines.slice(8)).to.have.members(['bot [to 6281200000009@s.whatsapp.net] ⚠️ the disk is almost full', 'bot [to 6281234567890@s.whatsapp.net] ⚠️ the disk is almost full']);
  });
});
