import { expect } from 'chai';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { definePlugin } from '../../../core/index.js';
import { createApp } from '../../../app/app.js';
import { FakeModel, startTestBot, type TestBot } from '../../../app/testing/index.js';
import remind from '../../../plugins/remind/index.js';
import { putFile, texts, workspaceDir } from '../../plugins/workspace/helpers.js';
import workspacePlugin from '../../../plugins/workspace/index.js';
import { ALICE, BOB, FAST_SENDING, UNPACED_SENDS } from '../../helpers/chat.js';

/*
 * The commands that act beyond their answer pass the effect guard as the tools do: `.schedule` (a task that runs tools
 * later: kind `schedule`) and `/ws reset confirm` (kind `deleteFiles`). config.json's `guard` decides: allowed they act
 * at once (the default), held they act only on the owner's 👍, denied they do nothing and say why.
 */

const OWNER = ALICE;
const OWNER_DIGITS = ALICE.split('@')[0]!;
const heldId = (text: string | undefined) => /\(([a-z0-9]{4})\)/.exec(text ?? '')?.[1];

describe('effect guard: commands that act pass the guard (.schedule, /ws reset)', function () {
  this.timeout(30_000);
  let model: FakeModel;
  let bot: TestBot | undefined;
  before(async () => (model = await FakeModel.start(() => 'ok')));
  after(() => model.close());
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });
  const startRemind = (guard?: Record<string, unknown>) => startTestBot(remind, { model, sendPacing: UNPACED_SENDS, config: { owners: [OWNER_DIGITS], access: { mode: 'everyone' }, sending: FAST_SENDING, ...(guard ? { guard } : {}) } });
  /** What the bot answered `from` in their own chat (a held action's question to the owner goes elsewhere). */
  const say = async (text: string, from: string) => texts((await bot!.push({ text, senderId: from })).filter((a) => (a as { chatId?: string }).chatId === from)).join('\n');
  const tasks = (from: string) => say('.reminders', from);

  it('.schedule runs at once where the policy allows (the default), for the owner and for others in their own chat', async () => {
    bot = await startRemind();
    expect((await bot.send({ text: '.schedule 2h the weather', senderId: OWNER })).join('\n')).to.match(/^🗓️ Task scheduled for /);
    expect((await bot.send({ text: '.schedule 2h the news', senderId: BOB })).join('\n')).to.match(/^🗓️ Task scheduled for /);
    expect(await tasks(OWNER)).to.include('the weather');
    expect(await tasks(BOB)).to.include('the news');
  });

  it('.schedule denied by guard.kinds.schedule: nothing is scheduled and the reason is said', async () => {
    bot = await startRemind({ kinds: { schedule: 'deny' } });
    expect((await bot.send({ text: '.schedule 2h the weather', senderId: OWNER })).join('\n')).to.match(/^Nothing was scheduled: the owner's rules do not let an owner do this \(schedule/);
    expect(await tasks(OWNER)).to.match(/^No reminders in this chat/);
    // A wrong time is still said as before (nothing to guard).
    expect((await bot.send({ text: '.schedule whenever the weather', senderId: OWNER })).join('\n')).to.not.match(/Nothing was scheduled/);
  });

  it('.schedule held: nothing is scheduled until the owner says .yes; someone else is told it waits; .no drops it', async () => {
    bot = await startRemind({ kinds: { schedule: 'hold' } });
    const asked = (await bot.send({ text: '.schedule 2h the weather', senderId: OWNER })).join('\n');
    expect(asked, 'the owner sees only the guard\'s question').to.match(/^⏳ Waiting for your OK \([a-z0-9]{4}\): schedule a task in this chat: 2h the weather/);
    expect(await tasks(OWNER)).to.match(/^No reminders in this chat/);
    expect((await bot.send({ text: `.yes ${heldId(asked)}`, senderId: OWNER })).join('\n')).to.match(/^🗓️ Task scheduled for /);
    expect(await tasks(OWNER)).to.include('the weather');

    const other = await say('.schedule 3h the news', BOB);
    expect(other).to.match(/^Nothing is scheduled yet: the owner is asked first \([a-z0-9]{4}\)/);
    const notice = bot.replies(OWNER).at(-1)!;
    expect(notice).to.match(/^⏳ Waiting for your OK/);
    expect(await tasks(BOB)).to.match(/^No reminders in this chat/);
    await bot.send({ text: `.no ${heldId(notice)}`, senderId: OWNER });
    expect(await tasks(BOB)).to.match(/^No reminders in this chat/);
  });
});

describe('effect guard: /ws reset confirm deletes files only when the guard allows', function () {
  this.timeout(30_000);
  let bot: TestBot | undefined;
  const USER = BOB;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });
  const start = (guard?: Record<string, unknown>) =>
    startTestBot(workspacePlugin, { options: { quotaMb: 2 }, sendPacing: UNPACED_SENDS, config: { owners: [OWNER_DIGITS], access: { mode: 'everyone' }, sending: FAST_SENDING, ...(guard ? { guard } : {}) } });
  /** Opens the user's workspace with one file in it; resolves with the files' folder. */
  const withFile = async (): Promise<string> => {
    await bot!.transport.push({ text: '/ws', senderId: USER });
    const dir = await workspaceDir(bot!, USER);
    await putFile(dir, 'keep.py', 'print(1)');
    return dir;
  };
  const reset = async () => {
    await bot!.transport.push({ text: '/ws reset', senderId: USER });
    return texts((await bot!.transport.push({ text: '/ws reset confirm', senderId: USER })).filter((a) => (a as { chatId?: string }).chatId === USER)).join('\n');
  };

  it('denied by guard.kinds.deleteFiles: the files stay and the reason is said', async () => {
    bot = await start({ kinds: { deleteFiles: 'deny' } });
    const dir = await withFile();
    expect(await reset()).to.match(/^Nothing was deleted: the owner's rules do not let someone who is not an owner do this \(deleteFiles/);
    expect(await readdir(dir)).to.include('keep.py');
  });

  it('held: the files stay until the owner\'s 👍, then go', async () => {
    bot = await start({ kinds: { deleteFiles: 'hold' } });
    const dir = await withFile();
    expect(await reset()).to.match(/^Nothing is deleted yet: the owner is asked first \([a-z0-9]{4}\)/);
    expect(await readdir(dir)).to.include('keep.py');
    const notice = bot.transport.actions.filter((a) => a.type === 'text' && a.chatId === OWNER).at(-1) as { id: string; text: string };
    expect(notice.text).to.match(/^⏳ Waiting for your OK \([a-z0-9]{4}\): delete every file of the workspace/);
    await bot.transport.reactTo('👍', OWNER, OWNER, notice.id);
    await bot.until(() => bot!.replies(OWNER).find((r) => r.startsWith('🗑 All files of the workspace were deleted')));
    expect(await readdir(dir)).to.not.include('keep.py');
  });

  it('allowed (the default): deleted at once', async () => {
    bot = await start();
    const dir = await withFile();
    expect(await reset()).to.match(/^🗑 All files of the workspace were deleted/);
    expect(await readdir(dir)).to.not.include('keep.py');
  });
});

describe('a bot-started send caught by the stop says so', function () {
  this.timeout(20_000);
  it('host.send still waiting for its recipient check when the bot stops is refused as "stopping", in the rejection and the log', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'guard-stopping-'));
    const model = await FakeModel.start(() => 'ok');
    let refused: { code?: string; message: string } | undefined;
    let settled!: () => void;
    const done = new Promise<void>((resolve) => (settled = resolve));
    const early = definePlugin({
      name: 'early',
      description: 'sends to the owner as it starts, before any transport is connected',
      setup(host) {
        void host.send(OWNER, 'good morning').then(
          () => settled(),
          (err: { code?: string; message: string }) => {
            refused = err;
            settled();
          },
        );
        return {};
      },
    });
    const lines: string[] = [];
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
    try {
      await writeFile(path.join(dir, 'config.json'), JSON.stringify({ owners: [OWNER_DIGITS], plugins: { early: { enabled: true } } }));
      const app = await createApp({ cwd: dir, env: { PATH: process.env.PATH ?? '', API_KEY: 'k', BASE_URL: model.url, MODEL: 'm' }, plugins: [early], logDestination: sink, logLevel: 'debug', skipHealthProbe: true });
      await app.stop();
      await done;
      expect(refused, 'the send is refused, not left hanging nor sent').to.not.equal(undefined);
      expect(refused!.code).to.equal('PLUGIN_SEND_CLOSED');
      expect(refused!.message).to.match(/stopping/);
      const said = lines.map((l) => JSON.parse(l) as { msg: string; chat?: string }).filter((l) => /not sent: the bot is stopping/.test(l.msg));
      expect(said.map((l) => l.chat)).to.deep.equal([OWNER]);
    } finally {
      await model.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('host.send waiting in the paced outbox when the bot stops is refused as "stopping", in the rejection and the log', async () => {
    const outcomes: string[] = [];
    /** The first message's outcome, noted: awaited before the stop (its reply alone can show before it is noted). */
    let first: Promise<unknown> | undefined;
    const sender = definePlugin({
      name: 'sender',
      description: 'starts two messages to the owner at once',
      setup: (host) => ({
        commands: [
          {
            command: 'two',
            run: () => {
              [first] = ['one', 'two'].map((text) => host.send(OWNER, text).then(() => outcomes.push(`${text}: sent`), (err: { code?: string; message: string }) => outcomes.push(`${text}: ${err.code} ${err.message}`)));
            },
          },
        ],
      }),
    });
    // One bot-started message a minute in a chat: the second waits in the outbox until the stop closes it.
    const bot = await startTestBot(sender, { config: { owners: [OWNER_DIGITS], shutdown: { graceSeconds: 0 }, sending: { perChatPerMinute: 1, globalPerMinute: 60, jitterMs: 0 } } });
    try {
      await bot.send({ text: '.two', senderId: OWNER });
      await first;
      expect(bot.replies(OWNER)).to.include('one');
    } finally {
      await bot.stop();
    }
    await bot.until(() => outcomes.length === 2);
    expect(outcomes).to.deep.equal(['one: sent', 'two: PLUGIN_SEND_CLOSED the bot is stopping: this message was not sent']);
    expect(bot.logs().filter((l) => /not sent: the bot is stopping/.test(l.msg)).map((l) => l.chat)).to.deep.equal([OWNER]);
  });
});
