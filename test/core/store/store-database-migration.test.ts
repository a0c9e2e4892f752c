import { expect } from 'chai';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { definePlugin, Store, Type } from '../../../core/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import type { QuotedMessage } from '../../../core/kernel/port/message.js';
import { everyFileText } from '../../helpers/disk-text.js';
import { tempDir } from '../../helpers/checkout.js';

const ALICE = '10000000001@s.whatsapp.net';
const BOB = '10000000002@s.whatsapp.net';
const HOUR = 60 * 60 * 1000;

const Said = Type.Object({ text: Type.String(), by: Type.String(), at: Type.Number() });
const SAID = Store.chatLog('said', Said, { people: { author: (s) => s.by }, keepDays: 30, at: (s) => s.at });

/** A plugin keeping a chat log, and reporting what it sees of a quoted message. */
const notes = definePlugin({
  name: 'notes',
  description: 'keeps what was said; reports quotes',
  stores: [SAID],
  setup: (host) => ({
    commands: [{ command: 'said', run: async (ctx) => ctx.reply((await host.store.chat(ctx.chatId).log(SAID).read()).map((s) => s.text).join(', ') || 'none') }],
    predicates: [
      {
        when: (ctx) => Boolean(ctx.message.quoted),
        usage: '(reply)',
        help: 'test',
        run: async (ctx) => ctx.reply(ctx.message.quoted!.deleted ? 'quote: deleted' : `quote: ${ctx.message.quoted!.text}`),
      },
    ],
  }),
});

/**
 * A data folder as the version before the store database wrote it (JSON and JSON-lines files): the first start takes
 * it in with nothing lost, keeps the files aside, and a person's delete then reaches what was taken in.
 */
describe('a data folder written before the store database, at the first start', function () {
  this.timeout(30_000);
  let dir: string;
  let t: TestBot | undefined;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  async function seed(): Promise<void> {
    const data = path.join(dir, 'data');
    const now = Date.now();
    const write = async (rel: string, text: string) => {
      await mkdir(path.dirname(path.join(data, rel)), { recursive: true });
      await writeFile(path.join(data, rel), text);
    };
    await write('deleted/messages.json', JSON.stringify({ version: 1, deleted: [{ chat: ALICE, id: 'gone-1', by: [ALICE], at: now - HOUR }] }));
    await write('bursts/merged.json', JSON.stringify({ version: 1, merged: [{ chat: ALICE, id: 'b-1', turn: 'b-2', sender: ALICE, at: now - HOUR }] }));
    await write('polls/sent.json', JSON.stringify({ version: 1, polls: [{ id: 'poll-1', chatId: ALICE, answerOnVote: true, at: now - HOUR }] }));
    await write(`notes/said/${ALICE}.jsonl`, [{ text: 'alice-first-words', by: ALICE, at: now - HOUR }, { text: 'alice-second-words', by: ALICE, at: now - HOUR }].map((i) => JSON.stringify(i) + '\n').join(''));
    await write(`notes/said/${BOB}.jsonl`, JSON.stringify({ text: 'bob-words', by: BOB, at: now - HOUR }) + '\n');
  }

  it('finds everything it kept, keeps the earlier files aside, and a person\'s delete reaches what was taken in', async () => {
    await seed();
    t = await startTestBot(notes, { dir });
    const quoted: QuotedMessage = { id: 'gone-1', senderId: ALICE, text: 'the old words', fromBot: false };
    const texts = async (text: string, extra: object = {}) => (await t!.transport.push({ text, ...extra })).map((a) => (a as { text?: string }).text).join('\n');
    expect(await texts('what was that?', { quoted }), 'a message deleted for everyone stays deleted').to.equal('quote: deleted');
    expect(await texts('.said')).to.equal('alice-first-words, alice-second-words');
    expect(await texts('.said', { senderId: BOB, chatId: BOB })).to.equal('bob-words');
    const exported = await t.app.bot.privacy.exportFor([ALICE]);
    expect(JSON.stringify(exported['messages answered together'])).to.include('b-1');
    expect(JSON.stringify(exported['messages deleted for everyone'])).to.include('gone-1');

    const data = path.join(dir, 'data');
    for (const folder of ['deleted', 'bursts', 'polls', path.join('notes', 'said')]) expect(await readdir(path.join(data, folder)), folder).to.deep.equal([]);
    expect(await readFile(path.join(data, 'migrated', 'bursts', 'merged.json'), 'utf8')).to.include('b-2');

    t = await t.restart();
    expect(await texts('.said'), 'taken in once: nothing twice after a restart').to.equal('alice-first-words, alice-second-words');

    await t.app.bot.privacy.deleteFor([ALICE]);
    expect(await texts('.said')).to.equal('none');
    expect(await texts('.said', { senderId: BOB, chatId: BOB })).to.equal('bob-words');
    const onDisk = await everyFileText(data, 'latin1');
    expect(onDisk).not.to.include('alice-first-words').and.not.to.include('alice-second-words');
    expect(onDisk).to.include('bob-words');
    // Their entries of the records taken in are gone too, with the copies of the earlier files that held them.
    expect(onDisk).not.to.include('gone-1').and.not.to.include('"b-1"');
  });
});
