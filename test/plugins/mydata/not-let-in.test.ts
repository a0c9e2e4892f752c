import { expect } from 'chai';
import accessPlugin from '../../../plugins/access/index.js';
import mydataPlugin from '../../../plugins/mydata/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const OWNER = '6281300000051@s.whatsapp.net';
const STRANGER = '6281300000052@s.whatsapp.net';
const GROUP = '120363000000000351@g.us';
const BOT = '10000000000@s.whatsapp.net';

/**
 * Under pairing, someone never let in still talks in groups an owner opened, and the bot keeps those words: `.mydata`
 * is theirs too. Their other private messages stay held.
 */
describe('.mydata for people not let in', function () {
  this.timeout(30_000);
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('a stranger gets what the bot keeps of their group words and can delete it; their other messages are still held', async () => {
    t = await startTestBot([accessPlugin, mydataPlugin], { ownIds: [BOT], config: { owners: [OWNER.split('@')[0]], access: { mode: 'pairing', allow: [], block: [] }, groups: { policy: 'allowlist' } } });
    await t.send({ chatId: GROUP, senderId: OWNER, text: `@${BOT.split('@')[0]} .activation always`, mentions: [BOT] });
    await t.send({ chatId: GROUP, senderId: STRANGER, text: 'my locker code is 4471' });
    await t.app.bot.idle();
    expect(JSON.stringify(await t.app.bot.histories.recent(GROUP))).to.contain('my locker code is 4471');

    const exported = await t.transport.push({ chatId: STRANGER, senderId: STRANGER, text: '.mydata' });
    expect(exported.map((a) => a.type), JSON.stringify(exported)).to.include('media');
    expect(exported.some((a) => a.type === 'text' && /pairing code/.test(a.text))).to.equal(false);
    expect(JSON.stringify(await t.app.bot.privacy.exportFor([STRANGER]))).to.contain('my locker code is 4471');

    expect((await t.send({ chatId: STRANGER, senderId: STRANGER, text: '.mydata delete' })).join('\n')).to.match(/confirm/);
    await t.send({ chatId: STRANGER, senderId: STRANGER, text: '.mydata delete confirm' });
    await t.app.bot.idle();
    expect(JSON.stringify(await t.app.bot.histories.recent(GROUP))).to.not.contain('4471');

    // Anything else they send privately is held as before: a pairing code, nothing for the model.
    expect((await t.send({ chatId: STRANGER, senderId: STRANGER, text: 'hello?' })).join('\n')).to.match(/pairing code/);
    expect(t.model.requests.filter((r) => JSON.stringify(r.messages).includes('hello?'))).to.deep.equal([]);
  });
});
