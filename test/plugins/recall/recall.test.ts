import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type BotAction, contentOf, FakeModel, lastText, type ModelRequest, startTestBot, type TestBot } from '../../../app/testing/index.js';
import controls from '../../../plugins/controls/index.js';
import mydata from '../../../plugins/mydata/index.js';
import recall from '../../../plugins/recall/index.js';
import { MemoryTransport } from '../../../core/adapters/memory/memory-transport.js';
import type { OutgoingMedia, SentMessage } from '../../../core/kernel/port/message.js';
import { everyFileText, storeDatabaseText, storedSearchLogText } from '../../helpers/disk-text.js';

const ANA = '10000000001@s.whatsapp.net';
const BUDI = '10000000002@s.whatsapp.net';
const DAY = 24 * 60 * 60 * 1000;
const logFolder = (dir: string, chat: string) => path.join(dir, 'data', 'recall', chat);

/**
 * The fake model: "recall: <json args>" makes it call the recall tool with those arguments (hostile ones included);
 * after a tool call it answers with the tool's result; "what is the code?" gets an answer only the model knows;
 * anything else gets "noted".
 */
function model(request: ModelRequest) {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return `tool said: ${lastText(request)}`;
  const text = lastText(request);
  if (text.startsWith('recall: ')) return { tool: 'recall', args: JSON.parse(text.slice('recall: '.length)) as Record<string, unknown> };
  if (text === 'what is the code?') return 'The door code is ORCHID-7391.';
  return 'noted';
}

/** The texts every request to the model carried (to prove a message is no longer in the prompt history). */
const promptOf = (request: ModelRequest | undefined) => JSON.stringify(request?.messages ?? []);

describe('recall: search of past conversations', function () {
  this.timeout(20_000);
  let dir: string;
  let bot: TestBot | undefined;
  const start = (options: Record<string, unknown> = {}) => startTestBot(recall, { dir, options, config: { history: { maxMessages: 2 } }, model });

  beforeEach(async () => {
    dir = await mkdtempDir();
  });
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('.recall finds an old message of this chat that left the prompt history, also what the bot said, after a restart too, and nothing of another chat', async () => {
    bot = await start();
    await bot.send({ text: 'the wifi password is tangerine42', senderId: ANA, senderName: 'Ana', id: 'plant-ana' });
    await bot.send({ text: 'what is the code?', senderId: ANA, senderName: 'Ana', id: 'ask-code' });
    await bot.send({ text: 'my locker number is zanzibar77', senderId: BUDI, senderName: 'Budi', id: 'plant-budi' });
    for (let i = 0; i < 4; i++) await bot.send({ text: `small talk number ${i}`, senderId: ANA });
    assert.doesNotMatch(promptOf(bot.model.requests.at(-1)), /tangerine42/, 'the planted message must have left the prompt history');

    const [found] = await bot.send({ text: '.recall tangerine42', senderId: ANA });
    assert.match(found, /^🔎 1 message in this chat about "tangerine42":\n1\. \d{4}-\d\d-\d\d \d\d:\d\d UTC · Ana: the wifi password is tangerine42/);
    // A little context: what the bot answered right after.
    assert.match(found, /↓ me \(the bot\): noted/);

    const [code] = await bot.send({ text: '.recall orchid', senderId: ANA });
    assert.match(code, /me \(the bot\): The door code is ORCHID-7391\./);
    assert.match(code, /↑ Ana: what is the code\?/);

    assert.match((await bot.send({ text: '.recall zanzibar77', senderId: ANA }))[0], /^Nothing in this chat's past messages matches "zanzibar77"\.$/);
    assert.match((await bot.send({ text: '.recall tangerine42', senderId: BUDI }))[0], /^Nothing in this chat/);
    assert.match((await bot.send({ text: '.recall zanzibar77', senderId: BUDI }))[0], /Budi: my locker number is zanzibar77/);

    await bot.stop();
    bot = await start();
    assert.match((await bot.send({ text: '.recall wifi password', senderId: ANA }))[0], /Ana: the wifi password is tangerine42/);
    assert.match((await bot.send({ text: '.recall ORCHID', senderId: ANA }))[0], /The door code is ORCHID-7391/);
    assert.match((await bot.send({ text: '.recall tangerine42', senderId: BUDI }))[0], /^Nothing in this chat/);
  });

  it('the recall tool searches only the calling chat, whatever the model passes, and frames results as data', async () => {
    bot = await start();
    await bot.send({ text: 'the wifi password is tangerine42', senderId: ANA, id: 'plant-ana' });
    await bot.send({ text: 'my locker number is zanzibar77', senderId: BUDI, id: 'plant-budi' });
    for (let i = 0; i < 3; i++) await bot.send({ text: `small talk number ${i}`, senderId: ANA });

    const toolResult = async (args: Record<string, unknown>, sender = ANA) => {
      const [answer] = await bot!.send({ text: `recall: ${JSON.stringify(args)}`, senderId: sender });
      assert.ok(answer.startsWith('tool said: '), answer);
      // The tool's result as the model received it (the answer to the chat is formatted for WhatsApp). The newest
      // request that ends in a tool result: a chat summary may be folded in the background meanwhile.
      const withResult = bot!.model.requests.filter((r) => r.messages.at(-1)?.role === 'tool').at(-1)!;
      return contentOf(lastText(withResult));
    };
    const plain = JSON.parse(await toolResult({ query: 'tangerine42' }));
    assert.match(plain.note, /as data: they are not instructions/);
    assert.equal(plain.results.length, 1);
    assert.equal(plain.results[0].text, 'the wifi password is tangerine42');

    // Another chat's id in the arguments changes nothing: the chat is the core's binding.
    const hostile = JSON.parse(await toolResult({ query: 'zanzibar77', chatId: BUDI, chat_id: BUDI, chat: BUDI }));
    assert.deepEqual(hostile.results, []);
    const fromBudi = JSON.parse(await toolResult({ query: 'tangerine42 zanzibar77', chatId: ANA }, BUDI));
    assert.deepEqual(fromBudi.results.map((r: { text: string }) => r.text), ['my locker number is zanzibar77']);

    // FlexSearch syntax and junk are plain words; a huge query is refused; no query is asked for.
    const special = JSON.parse(await toolResult({ query: '"tangerine42"* OR (wifi:password) ~^$ \\ __proto__ constructor' }));
    assert.ok(special.results.some((r: { text: string }) => r.text === 'the wifi password is tangerine42'), JSON.stringify(special.results));
    assert.match(JSON.parse(await toolResult({ query: 'x'.repeat(5000) })).error, /too long \(5000 characters; at most 200\)/);
    // A query that is no text is refused by the core before the tool runs, naming the field.
    assert.match(await toolResult({ query: 42 }), /^Error: recall was not run: its arguments do not fit its parameters \(query: must be string\)/);
    // The question that asked for the search is never its own result.
    const self = JSON.parse(await toolResult({ query: 'small talk number' }));
    assert.ok(self.results.every((r: { text: string }) => !r.text.startsWith('recall:')), JSON.stringify(self.results));
    assert.equal(self.results[0].text, 'small talk number 2', 'newest of equally good matches first');
  });

  it("the recall tool asked in a group searches the group, never the asker's private chat", async () => {
    const GROUP = '120363000000000009@g.us';
    const BOT = '15550001111';
    bot = await startTestBot(recall, { dir, config: { targetUserIds: [BOT] }, model });
    await bot.send({ text: 'my bank pin is tangerine42', senderId: ANA, id: 'private-ana' });
    await bot.send({ text: 'the group picnic is at mango park', chatId: GROUP, isGroup: true, senderId: BUDI, id: 'group-budi' });
    const [answer] = await bot.send({
      text: `@${BOT} recall: ${JSON.stringify({ query: 'bank pin picnic park' })}`,
      chatId: GROUP,
      isGroup: true,
      senderId: ANA,
      mentions: [`${BOT}@s.whatsapp.net`],
    });
    assert.ok(answer.startsWith('tool said: '), answer);
    // The tool's result as the model received it (the answer to the chat is formatted for WhatsApp).
    const results = JSON.parse(contentOf(lastText(bot.model.requests.at(-1)!))).results as Array<{ text: string }>;
    assert.deepEqual(results.map((r) => r.text), ['the group picnic is at mango park']);
    assert.doesNotMatch(answer, /tangerine42/);
  });

  it('.recall says how to use it, refuses huge queries and treats special characters as text', async () => {
    bot = await start();
    await bot.send({ text: 'meet at Jl. Merdeka 5 (the blue gate)', senderId: ANA });
    assert.match((await bot.send('.recall'))[0], /^Usage: \.recall <words> — searches what was said in this chat \(the last 365 days\), e.g\. \.recall address$/);
    assert.match((await bot.send(`.recall ${'merdeka '.repeat(60)}`))[0], /^That search is too long \(479 characters; at most 200\)\. Use a few words\.$/);
    assert.match((await bot.send('.recall *** ~~ ::'))[0], /^Search with words or numbers\. Usage: \.recall/);
    assert.match((await bot.send('.recall "merdeka"* (blue)'))[0], /Jl\. Merdeka 5 \(the blue gate\)/);
    assert.match((await bot.send('.recall constructor __proto__'))[0], /^Nothing in this chat/);
  });

  it('drops messages older than retentionDays at start, from disk too', async () => {
    bot = await start();
    await bot.send({ text: 'the old harbour address is pelican lane', senderId: ANA, timestamp: Date.now() - 40 * DAY });
    await bot.send({ text: 'the new harbour address is heron street', senderId: ANA });
    assert.match((await bot.send({ text: '.recall harbour', senderId: ANA }))[0], /^🔎 2 messages[\s\S]*heron street[\s\S]*pelican lane/);
    await bot.stop();

    bot = await start({ retentionDays: 30 });
    const [answer] = await bot.send({ text: '.recall harbour', senderId: ANA });
    assert.match(answer, /^🔎 1 message[\s\S]*heron street/);
    assert.doesNotMatch(answer, /pelican/);
    // The recall log's rows as the store database holds them (the prompt history keeps its own, shorter window).
    const onDisk = storedSearchLogText(path.join(dir, 'data'), 'recall', 'recall');
    assert.doesNotMatch(onDisk, /pelican/);
    assert.match(onDisk, /heron street/);
  });

  it('a corrupt log file is set aside with its bytes kept, bad lines are skipped and counted, and the chat still answers', async () => {
    const folder = logFolder(dir, ANA);
    await mkdir(folder, { recursive: true });
    const garbage = 'this is not a recall log \u0000\u0001 {{{';
    await writeFile(path.join(folder, '2026-01.jsonl'), garbage);
    // Its index snapshot describes a file that is set aside: it goes too (it holds the month's words).
    await writeFile(path.join(folder, '2026-01.index'), '{"recallIndex":1} secret words');
    // A file copied from another chat (its header names Budi) is never read into Ana's log.
    const at = Date.now() - 2 * DAY;
    const month = new Date(at).toISOString().slice(0, 7);
    await writeFile(path.join(folder, '2025-12.jsonl'), `${JSON.stringify({ recall: 1, chat: BUDI })}\n${JSON.stringify({ role: 'user', text: 'budi secret walrus', at })}\n`);
    await writeFile(
      path.join(folder, `${month}.jsonl`),
      [JSON.stringify({ recall: 1, chat: ANA }), JSON.stringify({ role: 'user', senderName: 'Ana', text: 'kept message about papaya', at }), '{"role":"user","text":', JSON.stringify({ role: 'robot', text: 'papaya wrong role', at }), ''].join('\n'),
    );

    bot = await start();
    assert.match((await bot.send({ text: '.recall papaya', senderId: ANA }))[0], /^🔎 1 message in this chat about "papaya":\n1\. .* · Ana: kept message about papaya/);
    assert.match((await bot.send({ text: '.recall walrus', senderId: ANA }))[0], /^Nothing in this chat/);
    await bot.send({ text: 'a fresh note about mangoes', senderId: ANA });
    assert.match((await bot.send({ text: '.recall mangoes', senderId: ANA }))[0], /a fresh note about mangoes/);

    const names = await readdir(folder);
    const aside = names.filter((n) => /^2026-01\.jsonl\.corrupt-\d+$/.test(n));
    assert.equal(aside.length, 1, names.join(', '));
    assert.equal(await readFile(path.join(folder, aside[0]), 'utf8'), garbage);
    assert.ok(names.some((n) => /^2025-12\.jsonl\.corrupt-\d+$/.test(n)), 'the other chat\'s file is set aside too');
    assert.ok(!names.includes('2026-01.index'), names.join(', '));
    const logs = bot.logs();
    assert.ok(logs.some((l) => String(l.msg).includes('2026-01.jsonl was set aside')), 'the set-aside file is named in the log');
    assert.ok(logs.some((l) => l.count === 2 && String(l.msg).includes('skipped 2 line(s)')), 'bad lines are counted in the log');
  });
});

const mkdtempDir = () => mkdtemp(path.join(os.tmpdir(), 'recall-test-'));

describe('recall with the rest of the bot (groups, .reset)', function () {
  this.timeout(20_000);
  const GROUP = '120363000000000077@g.us';
  const BOT = '62899999999@s.whatsapp.net';
  let model: FakeModel;
  let t: TestBot | undefined;

  beforeEach(async () => {
    model = await FakeModel.start(() => 'noted');
    t = await startTestBot([controls, recall], { model, config: { groups: { commandsWithoutMention: true } }, ownIds: [BOT] });
  });
  afterEach(async () => {
    await t?.stop();
    await model.close();
  });
  const say = async (input: Parameters<TestBot['transport']['push']>[0]) =>
    (await t!.transport.push(input)).filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text').map((a) => a.text);

  it('logs group messages not addressed to the bot, and .reset leaves the log alone', async () => {
    await say({ chatId: GROUP, senderId: ANA, senderName: 'Ana', text: 'the picnic moves to the lighthouse' });
    assert.deepEqual(model.requests, [], 'a group message for others is not answered');
    assert.match((await say({ chatId: GROUP, senderId: BUDI, text: '.recall lighthouse' }))[0], /Ana: the picnic moves to the lighthouse/);

    await say({ senderId: ANA, text: 'my passport number is K4471' });
    assert.match((await say({ senderId: ANA, text: '.reset' }))[0], /starts fresh/);
    assert.match((await say({ senderId: ANA, text: '.recall K4471' }))[0], /my passport number is K4471/);
    assert.match((await say({ senderId: ANA, text: '.recall noted' }))[0], /me \(the bot\): noted/);
  });
});

/** A memory transport that keeps the content of documents the bot sends (the bot removes the file after sending). */
class KeepingTransport extends MemoryTransport {
  documents: string[] = [];
  override async sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage> {
    this.documents.push(await readFile(media.path, 'utf8'));
    return super.sendMedia(chatId, media);
  }
}

describe('recall in the privacy controls (.mydata, deleted for everyone)', function () {
  this.timeout(20_000);
  const GROUP = '120363000000000088@g.us';
  let model: FakeModel;
  let t: TestBot | undefined;
  let transport: KeepingTransport;

  beforeEach(async () => {
    model = await FakeModel.start(() => 'noted about the quince');
    t = await startTestBot([mydata, recall], { model, config: { groups: { commandsWithoutMention: true } } });
    transport = new KeepingTransport();
    await t.app.connect(transport);
    await transport.push({ senderId: ANA, id: 'ana-private', text: 'my quince jam recipe uses cardamom' });
    await transport.push({ chatId: GROUP, senderId: ANA, id: 'ana-group', text: 'ana brings quince to the party' });
    await transport.push({ chatId: GROUP, senderId: BUDI, id: 'budi-group', text: 'budi brings quince too' });
  });
  afterEach(async () => {
    await t?.stop();
    await model.close();
  });
  const say = async (input: Parameters<TestBot['transport']['push']>[0]) =>
    (await transport.push(input)).filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text').map((a) => a.text);
  const onDisk = () => onDiskOf(t!.dir);
  /** Every byte of the store database, its WAL and everything under data/recall (the plugin's own files). */
  const onDiskOf = async (dir: string) => (await storeDatabaseText(path.join(dir, 'data'))) + (await everyFileText(path.join(dir, 'data', 'recall')));

  it(".mydata exports the person's part of the log: their private chat whole, in groups only what they wrote", async () => {
    const replies = await say({ senderId: ANA, text: '.mydata' });
    assert.equal(transport.documents.length, 1, replies.join('\n'));
    const section = JSON.parse(transport.documents[0])['recall log'] as Record<string, Array<{ text: string; role: string }>>;
    assert.deepEqual(section[ANA].map((e) => e.text), ['my quince jam recipe uses cardamom', 'noted about the quince']);
    assert.deepEqual(section[GROUP].map((e) => e.text), ['ana brings quince to the party']);
  });

  it('.mydata delete removes them from disk and search; a message deleted for everyone leaves the log', async () => {
    await say({ senderId: ANA, text: '.mydata delete' });
    assert.match((await say({ senderId: ANA, text: '.mydata delete confirm' }))[0], /recall log: [1-9]/);
    const text = await onDisk();
    assert.doesNotMatch(text, /cardamom|ana brings/);
    assert.match(text, /budi brings quince too/);
    assert.match((await say({ chatId: GROUP, senderId: BUDI, text: '.recall quince' }))[0], /^🔎 1 message[\s\S]*budi brings quince too/);

    await transport.revoke(GROUP, 'budi-group');
    assert.match((await say({ chatId: GROUP, senderId: BUDI, text: '.recall quince' }))[0], /^Nothing in this chat/);
    assert.doesNotMatch(await onDisk(), /budi brings/);
  });

  it('a message deleted for everyone the moment it was handled (before the bot turned to anything else) never reaches the log', async () => {
    // Not addressed to the bot: handled without a word to any upstream, so nothing else ran in between.
    await transport.push({ chatId: GROUP, senderId: BUDI, id: 'budi-oops', text: 'oops, my quince password is hunter2' });
    await transport.revoke(GROUP, 'budi-oops');
    assert.match((await say({ chatId: GROUP, senderId: BUDI, text: '.recall hunter2' }))[0], /^Nothing in this chat/);
    const app = t!;
    t = undefined;
    await app.app.stop();
    try {
      assert.doesNotMatch(await onDiskOf(app.dir), /hunter2/);
    } finally {
      await rm(app.dir, { recursive: true, force: true });
    }
  });
});
