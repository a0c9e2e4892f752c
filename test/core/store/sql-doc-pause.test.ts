import { expect } from 'chai';
import { definePlugin, Store, Type, type PluginStore } from '../../../core/index.js';
import { databaseFor } from '../../../core/services/store/database.js';
import { DOC_WRITE_PAUSE_MS } from '../../../core/kernel/bot/plugin-hosts.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { storedDocuments, storedSearchLogText } from '../../helpers/disk-text.js';

const TALLY = Store.doc('tally', Type.Object({ turns: Type.Integer() }), () => ({ turns: 0 }));
/** The same tally declared as changing with every message: it gathers for `data.flushIntervalMs`. */
const PER_MESSAGE = Store.doc('per-message', Type.Object({ turns: Type.Integer() }), () => ({ turns: 0 }), { perMessage: true });

let store: PluginStore | undefined;
/** A plugin that changes one document per message, as the profiles plugin counts the money of every answer. */
const tallyPlugin = definePlugin({
  name: 'tally',
  description: 'Counts the messages it is sent',
  stores: [TALLY, PER_MESSAGE],
  setup(host) {
    store = host.store;
    return {
      commands: [
        { command: 'count', run: async (ctx) => ctx.reply(`turn ${(await host.store.doc(TALLY).update((d) => void d.turns++)).turns}`) },
        { command: 'tally', run: async (ctx) => ctx.reply(`turn ${(await host.store.doc(PER_MESSAGE).update((d) => void d.turns++)).turns}`) },
      ],
    };
  },
});

/*
 * A plugin's document changed by every message is written once per busy moment, as its JSON file was: the changes
 * made within DOC_WRITE_PAUSE_MS go into one statement, written after the pause on its own, or at a flush or stop.
 */
describe("a plugin's documents: the changes of a busy moment are written together after a short pause", function () {
  this.timeout(30_000);
  let bot: TestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  const stored = () => storedDocuments(`${bot!.dir}/data`, 'tally', 'tally')['']?.turns;
  /** How many statements changed the store database so far (SQLite's count on the app's own connection). */
  const changes = () => databaseFor(`${bot!.dir}/data`).get<{ n: number }>('SELECT total_changes() AS n')!.n;

  it('ten messages in a row are one write, made after the pause without a flush', async () => {
    bot = await startTestBot(tallyPlugin);
    expect(await bot.send('.count')).to.deep.equal(['turn 1']);
    await bot.app.bot.whenStoresIdle();
    const clock = bot.useClock(['setTimeout', 'clearTimeout']);
    const before = changes();
    for (let i = 2; i <= 11; i++) expect(await bot.send('.count')).to.deep.equal([`turn ${i}`]);
    expect(stored(), 'not written before its pause').to.equal(1);
    await clock.tick(DOC_WRITE_PAUSE_MS);
    expect(stored()).to.equal(11);
    expect(changes() - before, 'one statement for the ten changes').to.equal(1);
  });

  it('a document declared perMessage gathers its changes for data.flushIntervalMs, then one write', async () => {
    bot = await startTestBot(tallyPlugin, { config: { data: { flushIntervalMs: 5000 } } });
    const perMessage = () => storedDocuments(`${bot!.dir}/data`, 'tally', 'per-message')['']?.turns;
    const clock = bot.useClock(['setTimeout', 'clearTimeout']);
    expect(await bot.send('.tally')).to.deep.equal(['turn 1']);
    // The first change is written after its own 5 s (moved on the fake clock, not waited out).
    const firstWritten = bot.app.bot.whenStoresIdle();
    await clock.tick(5000);
    await firstWritten;
    expect(perMessage()).to.equal(1);
    const before = changes();
    for (let i = 2; i <= 11; i++) expect(await bot.send('.tally')).to.deep.equal([`turn ${i}`]);
    await clock.tick(DOC_WRITE_PAUSE_MS);
    expect(perMessage(), 'not written after the short pause').to.equal(1);
    await clock.tick(5000 - DOC_WRITE_PAUSE_MS - 1);
    expect(perMessage(), 'not written before data.flushIntervalMs').to.equal(1);
    await clock.tick(1);
    expect(perMessage()).to.equal(11);
    expect(changes() - before, 'one statement for the ten changes').to.equal(1);
  });

  it('a change still in its pause is written at the stop (read back after a restart)', async () => {
    bot = await startTestBot(tallyPlugin);
    bot.useClock(['setTimeout', 'clearTimeout']);
    await bot.send('.count');
    await store!.doc(TALLY).update((d) => void (d.turns = 40));
    bot = await bot.restart();
    expect(await bot.send('.count')).to.deep.equal(['turn 41']);
  });
});

/** A search log whose items are added without waiting, written 3 s later (as the recall log's lines are). */
const NOTES = Store.chatSearchLog('notes', Type.Object({ at: Type.Number(), text: Type.String() }));
const NOTES_DELAY_MS = 3000;
const notesPlugin = definePlugin({
  name: 'notes',
  description: 'Notes what it is told',
  stores: [NOTES],
  setup: (host) => ({
    commands: [
      {
        command: 'note',
        run: async (ctx) => {
          host.store.chat(ctx.chatId).searchLog(NOTES).addSoon({ at: Date.now(), text: ctx.args }, NOTES_DELAY_MS);
          await ctx.reply('noted');
        },
      },
    ],
  }),
});

/*
 * A search log's items added without waiting (the recall and voice logs' lines) are written a while after they were
 * added. A test that waits for the bot's stores to be idle must find them on disk then, without a flush of its own.
 */
describe("the bot's whenStoresIdle covers a search log's items written after their delay", function () {
  this.timeout(30_000);
  let bot: TestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it('resolves once the items are written on their own, after their delay, and not before', async () => {
    bot = await startTestBot(notesPlugin);
    const onDisk = () => storedSearchLogText(`${bot!.dir}/data`, 'notes', 'notes');
    const clock = bot.useClock(['setTimeout', 'clearTimeout']);
    try {
      expect(await bot.send('.note the boiler code is heron 5521')).to.deep.equal(['noted']);
      let idle = false;
      const waited = bot.app.bot.whenStoresIdle().then(() => void (idle = true));
      await clock.tick(NOTES_DELAY_MS - 1);
      expect(idle, 'idle before the note was written').to.equal(false);
      expect(onDisk()).to.not.include('heron 5521');
      await clock.tick(1);
      await waited;
      expect(onDisk()).to.include('heron 5521');
    } finally {
      clock.restore();
    }
  });
});
