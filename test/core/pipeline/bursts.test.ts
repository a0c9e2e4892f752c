import { storeDatabaseText, storedRecordRows } from '../../helpers/disk-text.js';
import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import pingPlugin from '../../../plugins/ping/index.js';
import { FakeGateway, completion, lastUserText } from '../../fakes/openai-gateway.js';
import type { FakeBehaviour, RecordedRequest } from '../../../app/testing/http-fake.js';
import { runConsoleChat as runChat } from '../../helpers/console-chat.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const texts = (actions: Array<{ type: string }>) => actions.filter((a) => a.type === 'text').map((a) => (a as unknown as { text: string }).text);

describe("a sender's burst is one turn", () => {
  let gateway: FakeGateway;
  let t: TestBot | undefined;
  /** While set, the gateway holds its answers until this resolves (a slow model). */
  let hold: Promise<void> | undefined;

  beforeEach(async () => {
    hold = undefined;
    gateway = await FakeGateway.start('gw', () => async (req: RecordedRequest): Promise<FakeBehaviour> => {
      if (hold) await hold;
      return { status: 200, json: completion(`gw: ${lastUserText(req)}`) };
    });
  });
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await gateway.close();
  });

  const env = () => ({ API_KEY: 'sk-test-123456', BASE_URL: `${gateway.url}/v1`, MODEL: 'main' });
  const start = (debounceMs: number) =>
    startTestBot(pingPlugin, { env: env(), config: { access: { mode: 'everyone', allow: [], block: [] }, groups: { policy: 'open' }, targetUserIds: ['10000000000'], conversation: { debounceMs } } });

  it('answers consecutive free-text messages of one sender with one model call and one reply, in order', async () => {
    t = await start(300);
    const pushes = ['hi', 'quick question', 'the invoice from May?'].map((text) => t!.transport.push({ text }));
    const actions = await Promise.all(pushes);
    expect(gateway.chats()).to.have.length(1);
    expect(lastUserText(gateway.chats()[0])).to.equal('hi\nquick question\nthe invoice from May?');
    expect(texts(actions.at(-1)!)).to.deep.equal(['gw: hi\nquick question\nthe invoice from May?']);
  });

  const CHAT = '10000000001@s.whatsapp.net';
  it('a delete or an edit for everyone of any message of a burst leaves none of its words in what the history keeps of the user', async () => {
    t = await start(300);
    await Promise.all(['my pin is 4711', 'and the door code 0815', 'what do you think?'].map((text, i) => t!.transport.push({ text, id: `burst-${i}` })));
    const stored = async () => (await t!.app.bot.histories.recent(CHAT, 100)).filter((e) => e.role === 'user').map((e) => e.text).join('\n');
    expect(await stored()).to.include('4711');
    await t!.transport.revoke(CHAT, 'burst-0');
    expect(await stored()).to.not.include('4711');
    await Promise.all(['the code is 2468', 'ok?'].map((text, i) => t!.transport.push({ text, id: `again-${i}` })));
    expect(await stored()).to.include('2468');
    await t!.transport.edit(CHAT, 'again-0', 'the code is secret');
    expect(await stored()).to.not.include('2468');
  });

  it('a delete or an edit for everyone of an earlier message of a burst still removes its turn after a restart', async () => {
    const dir = await tempDir();
    const config = { access: { mode: 'everyone', allow: [], block: [] }, groups: { policy: 'open' }, targetUserIds: ['10000000000'], conversation: { debounceMs: 300 } };
    try {
      t = await startTestBot(pingPlugin, { env: env(), dir, config });
      await Promise.all(['my pin is 4711', 'and the door code 0815', 'what do you think?'].map((text, i) => t!.transport.push({ text, id: `burst-${i}` })));
      await Promise.all(['the code is 2468', 'ok?'].map((text, i) => t!.transport.push({ text, id: `again-${i}` })));
      t = await t.restart();
      const stored = async () => (await t!.app.bot.histories.recent(CHAT, 100)).filter((e) => e.role === 'user').map((e) => e.text).join('\n');
      expect(await stored()).to.include('4711').and.include('2468');
      await t.transport.revoke(CHAT, 'burst-0');
      expect(await stored()).to.not.include('4711');
      expect(await stored()).to.include('2468');
      await t.transport.edit(CHAT, 'again-0', 'the code is secret');
      expect(await stored()).to.not.include('2468');
    } finally {
      await t?.stop();
      t = undefined;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps which messages were answered together only as ids, in .mydata, and forgets them with the person', async () => {
    const dir = await tempDir();
    const config = { access: { mode: 'everyone', allow: [], block: [] }, groups: { policy: 'open' }, targetUserIds: ['10000000000'], conversation: { debounceMs: 300 } };
    try {
      t = await startTestBot(pingPlugin, { env: env(), dir, config });
      await Promise.all(['one thing', 'another thing'].map((text, i) => t!.transport.push({ text, id: `pair-${i}` })));
      const section = async () => JSON.stringify((await t!.app.bot.privacy.exportFor([CHAT]))['messages answered together'] ?? null);
      expect(await section()).to.include('pair-0').and.include('pair-1');
      t = await t.restart({}, async () => {
        // Kept in the store database (its file and WAL), as ids only: the record's rows hold none of the words (the
        // database also holds the .why record of the answer, whose start the profiles plugin keeps by design).
        const file = await storeDatabaseText(path.join(dir, 'data'));
        expect(file).to.include('pair-0');
        const rows = storedRecordRows(path.join(dir, 'data'), 'merged');
        expect(rows.join('\n')).to.include('pair-0').and.include('pair-1');
        expect(rows.join('\n')).to.not.include('thing');
      });
      await t.app.bot.privacy.deleteFor([CHAT]);
      expect(await section()).to.not.include('pair-0');
      await t.stop();
      expect(await storeDatabaseText(path.join(dir, 'data'))).to.not.include('pair-0');
    } finally {
      await t?.stop();
      t = undefined;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('never holds a command back: it ends the burst and is answered at once, after it', async () => {
    // A window of a minute: a command held for it would time the test out.
    t = await start(60_000);
    const burst = t.transport.push({ text: 'hello there' });
    const command = await t.transport.push({ text: '.ping' });
    expect(texts(command).at(-1)).to.match(/^pong/);
    expect(texts(await burst)[0]).to.equal('gw: hello there');
    expect(gateway.chats()).to.have.length(1);
  });

  it('keeps different senders apart', async () => {
    t = await start(300);
    const group = { chatId: '120363000000000009@g.us', isGroup: true, mentions: ['10000000000@s.whatsapp.net'] };
    await Promise.all([
      t.transport.push({ ...group, senderId: '10000000001@s.whatsapp.net', text: '@10000000000 one' }),
      t.transport.push({ ...group, senderId: '10000000002@s.whatsapp.net', text: '@10000000000 two' }),
    ]);
    expect(gateway.chats()).to.have.length(2);
  });

  it('collects what the sender writes during a slow answer into one follow-up turn', async () => {
    t = await start(100);
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    const first = t.transport.push({ text: 'first question' });
    await gateway.http.until(() => gateway.chats().length === 1);
    const later = ['and also', 'one more thing'].map((text) => t!.transport.push({ text }));
    release();
    await Promise.all([first, ...later]);
    expect(gateway.chats().map(lastUserText)).to.deep.equal(['first question', 'and also\none more thing']);
    expect(texts(t.transport.actions)).to.deep.equal(['gw: first question', 'gw: and also\none more thing']);
  });

  it('carries at most 20 messages in full in a follow-up and sums up the rest in one line', async () => {
    t = await start(100);
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    const first = t.transport.push({ text: 'start' });
    await gateway.http.until(() => gateway.chats().length === 1);
    const later = Array.from({ length: 25 }, (_, i) => t!.transport.push({ text: `line ${i + 1}` }));
    release();
    await Promise.all([first, ...later]);
    expect(gateway.chats()).to.have.length(2);
    const lines = lastUserText(gateway.chats()[1]).split('\n');
    expect(lines).to.have.length(21);
    expect(lines[0]).to.equal('[5 earlier messages: line 1 / line 2 / line 3 / line 4 / line 5]');
    expect(lines.slice(1)).to.deep.equal(Array.from({ length: 20 }, (_, i) => `line ${i + 6}`));
  });

  it('answers every message on its own when the window is 0', async () => {
    t = await start(0);
    await Promise.all(['a', 'b'].map((text) => t!.transport.push({ text })));
    expect(gateway.chats().map(lastUserText)).to.deep.equal(['a', 'b']);
  });
});

describe('bursts on the console (piped input; the console chat in this process)', function () {
  this.timeout(30_000);
  let gateway: FakeGateway;
  beforeEach(async () => {
    gateway = await FakeGateway.start('gw');
  });
  afterEach(() => gateway.close());
  const env = () => ({ API_KEY: 'sk-test-123456', BASE_URL: `${gateway.url}/v1`, MODEL: 'main' });
  const config = (extra: Record<string, unknown> = {}) => ({ access: { mode: 'everyone', allow: [], block: [] }, port: 0, ...extra });

  it('keeps every line its own message unless config.json sets conversation.debounceMs', async () => {
    const dir = await tempDir();
    await writeConfig(dir, config());
    const run = await runChat('hi\nquick question\n', { cwd: dir, env: env() });
    expect(run.code).to.equal(0);
    expect(run.lines).to.deep.equal(['bot> gw: hi', 'bot> gw: quick question']);
  });

  it('with conversation.debounceMs set: one turn until a command, another sender, or a :sleep longer than the window', async () => {
    const dir = await tempDir();
    await writeConfig(dir, config({ conversation: { debounceMs: 1000 } }));
    const script = ['hi', 'quick question', 'the invoice from May', '.help', 'after the command', ':sleep 1500', 'after the sleep', ':as 10000000002', 'someone else'].join('\n');
    const run = await runChat(`${script}\n`, { cwd: dir, env: env() });
    expect(run.code).to.equal(0);
    expect(gateway.chats().map(lastUserText)).to.deep.equal(['hi\nquick question\nthe invoice from May', 'after the command', 'after the sleep', 'someone else']);
    expect(run.lines[0]).to.equal('bot> gw: hi');
    expect(run.lines.slice(1, 3)).to.deep.equal(['  quick question', '  the invoice from May']);
  });

  it(':sleep needs milliseconds', async () => {
    const dir = await tempDir();
    await writeConfig(dir, config());
    const run = await runChat(':sleep soon\n', { cwd: dir, env: env() });
    expect(run.stderr).to.include(':sleep needs milliseconds');
  });
});
