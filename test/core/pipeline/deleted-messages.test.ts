import { expect } from 'chai';
import { definePlugin } from '../../../core/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import type { QuotedMessage } from '../../../core/kernel/port/message.js';

const ALICE = '10000000001@s.whatsapp.net';
const BOB = '10000000002@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const BOT = '10000000099@s.whatsapp.net';

/** What a plugin saw of the quoted message: its words, whether it is marked deleted, and what its download gave. */
interface Seen {
  text: string;
  deleted: boolean;
  download: string;
}

/**
 * Messages deleted for everyone are remembered by id, so a later reply quoting one reaches the plugins marked deleted,
 * without its words, its media refusing to download — also after a restart; only a delete the core honours counts
 * (the sender's own, an admin's, the account's), and the record is in the privacy controls.
 */
describe('messages deleted for everyone stay deleted in later quotes', function () {
  this.timeout(30_000);
  let t: TestBot | undefined;
  let seen: Seen[];

  const looker = definePlugin({
    name: 'looker',
    description: 'reports what it sees of a quoted message',
    setup: () => ({
      predicates: [
        {
          when: (ctx) => Boolean(ctx.message.quoted),
          usage: '(reply)',
          help: 'test',
          run: async (ctx) => {
            const quoted = ctx.message.quoted!;
            const download = quoted.media ? await quoted.media.download().then((b) => b.toString(), (err: Error) => `refused: ${err.message}`) : 'no media';
            seen.push({ text: quoted.text, deleted: Boolean(quoted.deleted), download });
            await ctx.reply('seen');
          },
        },
      ],
    }),
  });

  beforeEach(() => {
    seen = [];
  });
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  const quoteOf = (id: string, senderId = ALICE): QuotedMessage => ({ id, senderId, text: 'the old words', fromBot: false, media: { kind: 'image', mimetype: 'image/jpeg', download: async () => Buffer.from('the old photo') } });

  it("marks a quote of the sender's own deleted message deleted, without words or media, and still after a restart", async () => {
    t = await startTestBot(looker);
    await t.transport.push({ text: 'a photo', id: 'm-1' });
    await t.transport.revoke(ALICE, 'm-1', { ids: [ALICE] });
    await t.transport.push({ text: 'what was that?', quoted: quoteOf('m-1') });
    await t.transport.push({ text: 'and this?', quoted: quoteOf('m-2') });
    expect(seen).to.deep.equal([
      { text: '', deleted: true, download: 'refused: the quoted message was deleted for everyone' },
      { text: 'the old words', deleted: false, download: 'the old photo' },
    ]);
    t = await t.restart();
    await t.transport.push({ text: 'again?', quoted: quoteOf('m-1') });
    expect(seen.at(-1)).to.deep.equal({ text: '', deleted: true, download: 'refused: the quoted message was deleted for everyone' });
  });

  it("a member's delete of someone else's group message hides nothing; a group admin's does", async () => {
    t = await startTestBot(looker, { ownIds: [BOT], config: { access: { mode: 'everyone', allow: [], block: [] } } });
    t.transport.groupAdmins.set(GROUP, []);
    await t.transport.revoke(GROUP, 'g-1', { ids: [BOB] });
    await t.transport.push({ chatId: GROUP, senderId: BOB, text: `@${BOT.split('@')[0]} what was it?`, mentions: [BOT], quoted: quoteOf('g-1') });
    expect(seen.at(-1)).to.include({ deleted: false, text: 'the old words' });
    t.transport.groupAdmins.set(GROUP, [BOB]);
    await t.transport.revoke(GROUP, 'g-1', { ids: [BOB] });
    await t.transport.push({ chatId: GROUP, senderId: BOB, text: `@${BOT.split('@')[0]} and now?`, mentions: [BOT], quoted: quoteOf('g-1') });
    expect(seen.at(-1)).to.include({ deleted: true, text: '' });
  });

  it('a delete in one chat does not mark the same message id quoted in another chat', async () => {
    t = await startTestBot(looker);
    await t.transport.revoke(ALICE, 'same-id', { ids: [ALICE] });
    await t.transport.push({ senderId: BOB, text: 'what is it?', quoted: quoteOf('same-id', BOB) });
    expect(seen.at(-1)).to.include({ deleted: false });
  });

  it("is in the person's .mydata export and goes with their delete (ids only)", async () => {
    t = await startTestBot(looker);
    await t.transport.revoke(ALICE, 'm-9', { ids: [ALICE] });
    const exported = (await t.app.bot.privacy.exportFor([ALICE]))['messages deleted for everyone'] as Array<{ chat: string; id: string }>;
    expect(exported.map((e) => [e.chat, e.id])).to.deep.equal([[ALICE, 'm-9']]);
    await t.app.bot.privacy.deleteFor([ALICE]);
    expect((await t.app.bot.privacy.exportFor([ALICE]))['messages deleted for everyone']).to.deep.equal([]);
  });
});
