import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { contentOf, lastText, startTestBot, type ModelRequest, type TestBot } from '../../../app/testing/index.js';
import recall from '../../../plugins/recall/index.js';
import { storedSearchLogText } from '../../helpers/disk-text.js';

const ANA = '10000000001@s.whatsapp.net';
const BUDI = '10000000002@s.whatsapp.net';
const GROUP = '120363000000000099@g.us';
const MINUTE = 60 * 1000;

/** "recall: <json>" makes the fake model call the recall tool; it then answers with the tool's result; else "noted". */
function model(request: ModelRequest) {
  if (request.messages.at(-1)?.role === 'tool') return `tool said: ${lastText(request)}`;
  const text = lastText(request);
  return text.startsWith('recall: ') ? { tool: 'recall', args: JSON.parse(text.slice('recall: '.length)) as Record<string, unknown> } : 'noted';
}

/** The numbered matches of a `.recall` answer, without date and time: `Ana: the message`. */
const matches = (answer: string) => answer.split('\n').filter((l) => /^\d+\. /.test(l)).map((l) => l.replace(/^\d+\. [\d-]+ [\d:]+ UTC · /, ''));

describe('recall: what a search shows', function () {
  this.timeout(20_000);
  let dir: string;
  let bot: TestBot | undefined;
  const start = (options: Record<string, unknown> = {}) => startTestBot(recall, { dir, options, config: { groups: { commandsWithoutMention: true } }, model });
  /** The recall tool's result when the model calls it with `query` for a message of Ana's private chat. */
  const toolResult = async (query: string) => {
    const [answer] = await bot!.send({ senderId: ANA, text: `recall: ${JSON.stringify({ query })}` });
    return JSON.parse(contentOf(answer.replace(/^tool said: /, ''))) as { results: Array<{ text: string; sender: string; before?: { text: string }; after?: { text: string } }> };
  };

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'recall-ranking-'));
    bot = await start();
  });
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('a rare word counts more than a common one: the only message about the flamingo comes before newer ones about the key', async () => {
    await bot!.send({ chatId: GROUP, senderId: ANA, senderName: 'Ana', text: 'the spare one hides under the flamingo pot' });
    for (let i = 0; i < 6; i++) await bot!.send({ chatId: GROUP, senderId: BUDI, senderName: 'Budi', text: `key ring number ${i} is on the shelf` });
    const shown = matches((await bot!.send({ chatId: GROUP, senderId: BUDI, text: '.recall key flamingo' }))[0]);
    assert.equal(shown[0], 'Ana: the spare one hides under the flamingo pot', shown.join('\n'));
    assert.deepEqual(shown.slice(1), [5, 4, 3, 2].map((i) => `Budi: key ring number ${i} is on the shelf`), 'then the common word, newest first');
  });

  it('the message before and after are shown across a month boundary', async () => {
    // The last minute of one month and the first of the next (two months ago: well inside the retention).
    const boundary = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 1);
    await bot!.send({ chatId: GROUP, senderId: ANA, senderName: 'Ana', text: 'the ferry leaves from pier seven', timestamp: boundary - MINUTE });
    await bot!.send({ chatId: GROUP, senderId: BUDI, senderName: 'Budi', text: 'bring the blue tickets', timestamp: boundary + MINUTE });
    const pier = (await bot!.send({ chatId: GROUP, senderId: BUDI, text: '.recall pier' }))[0];
    assert.match(pier, /^1\. .* · Ana: the ferry leaves from pier seven\n {3}↓ Budi: bring the blue tickets$/m);
    const tickets = (await bot!.send({ chatId: GROUP, senderId: BUDI, text: '.recall tickets' }))[0];
    assert.match(tickets, /^1\. .* · Budi: bring the blue tickets\n {3}↑ Ana: the ferry leaves from pier seven$/m);
  });

  it('a message sent after the chat was searched is found at once as itself (not as its neighbour)', async () => {
    await bot!.send({ senderId: ANA, senderName: 'Ana', text: 'first words about the weather' });
    assert.match((await bot!.send({ senderId: ANA, text: '.recall weather' }))[0], /^🔎 1 message/);
    await bot!.send({ senderId: ANA, senderName: 'Ana', text: 'a fresh note about mangoes' });
    await bot!.send({ senderId: ANA, senderName: 'Ana', text: 'and one about papayas' });
    assert.deepEqual(matches((await bot!.send({ senderId: ANA, text: '.recall mangoes' }))[0]), ['Ana: a fresh note about mangoes']);
    assert.deepEqual(matches((await bot!.send({ senderId: ANA, text: '.recall papayas' }))[0]), ['Ana: and one about papayas']);
    assert.deepEqual(matches((await bot!.send({ senderId: ANA, text: '.recall noted' }))[0]), ['me (the bot): noted', 'me (the bot): noted', 'me (the bot): noted']);
  });

  it('a pasted novel is found by its first words and kept clipped in the log (the log is for finding things)', async () => {
    const novel = `chapter one of the zeppelin saga ${'and then it rained again '.repeat(8000)}the hidden final word is marmalade`;
    await bot!.send({ senderId: ANA, senderName: 'Ana', text: novel });
    assert.match((await bot!.send({ senderId: ANA, text: '.recall zeppelin' }))[0], /^🔎 1 message[\s\S]*Ana: chapter one of the zeppelin saga and then it rained/);
    const bytes = Buffer.byteLength(storedSearchLogText(path.join(dir, 'data'), 'recall', 'recall', ANA));
    assert.ok(bytes < 10_000, `the log holds ${bytes} bytes for a ${novel.length}-character message`);
  });

  it('a long message is quoted around the word that matched; a sender without a name is shown by number', async () => {
    const long = `${'we talked about many other things that day and '.repeat(20)}the spare key is under the doormat`;
    await bot!.send({ senderId: ANA, text: long });
    const shown = matches((await bot!.send({ senderId: ANA, text: '.recall doormat' }))[0]);
    assert.equal(shown.length, 1);
    assert.match(shown[0], /^10000000001: ….*the spare key is under the doormat$/);
    assert.ok(shown[0].length < 400, shown[0]);
  });

  it('maxResults bounds what .recall shows and what the tool returns; the tool gets the message before and after too', async () => {
    await bot!.stop();
    bot = await start({ maxResults: 2 });
    for (let i = 0; i < 4; i++) await bot.send({ senderId: ANA, senderName: 'Ana', text: `lemon tart number ${i}` });
    assert.deepEqual(matches((await bot.send({ senderId: ANA, text: '.recall lemon' }))[0]), ['Ana: lemon tart number 3', 'Ana: lemon tart number 2']);
    const found = await toolResult('lemon');
    assert.deepEqual(found.results.map((r) => r.text), ['lemon tart number 3', 'lemon tart number 2']);
    assert.deepEqual([found.results[1].before?.text, found.results[1].after?.text], ['noted', 'noted']);
    assert.equal(found.results[1].sender, 'Ana');
  });

  it('commands are not conversation: commands in a group, not addressed to the bot, are not logged (they join the history as context)', async () => {
    await bot!.stop();
    // Without commandsWithoutMention the group's messages reach only the observers (nobody answers them).
    bot = await startTestBot(recall, { dir, model });
    await bot.send({ chatId: GROUP, senderId: BUDI, senderName: 'Budi', text: '/ws cat secretplan.txt' });
    await bot.send({ chatId: GROUP, senderId: BUDI, senderName: 'Budi', text: 'the secretplan is ready' });
    await bot.send({ chatId: GROUP, senderId: ANA, senderName: 'Ana', text: '.recall secretplan' });
    await bot.stop();
    bot = undefined;
    const logged = storedSearchLogText(path.join(dir, 'data'), 'recall', 'recall', GROUP);
    assert.match(logged, /the secretplan is ready/);
    assert.doesNotMatch(logged, /\/ws cat|\.recall/);
  });

  it('a search of exactly maxQueryChars characters is accepted, one more is refused', async () => {
    await bot!.send({ senderId: ANA, senderName: 'Ana', text: 'the mango tree is blooming' });
    const words = 'mango '.repeat(40).slice(0, 200).trim();
    const longest = words + 'x'.repeat(200 - words.length);
    assert.equal(longest.length, 200);
    assert.match((await bot!.send({ senderId: ANA, text: `.recall ${longest}` }))[0], /^🔎 1 message in this chat about/);
    assert.match((await bot!.send({ senderId: ANA, text: `.recall ${longest}y` }))[0], /^That search is too long \(201 characters; at most 200\)/);
  });
});
