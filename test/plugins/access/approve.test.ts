import { expect } from 'chai';
import accessPlugin from '../../../plugins/access/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { UNPACED_SENDS } from '../../helpers/chat.js';

const OWNER = '6281300000001@s.whatsapp.net';
const FRIEND = '6281300000002@s.whatsapp.net';
const STRANGER = '6281300000003@s.whatsapp.net';

/** `.approve` and `.deny` belong to the owners: someone merely let in cannot let others in, even in a private chat. */
describe('access: pairing codes are approved by owners only', function () {
  this.timeout(30_000);
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('a let-in non-owner sending .approve or .deny with a valid code in a private chat is refused; the stranger stays out', async () => {
    // The owner's pairing notice goes out at once: who may approve is tested here, not the pace of notices.
    t = await startTestBot(accessPlugin, { sendPacing: UNPACED_SENDS, config: { owners: [OWNER.split('@')[0]], access: { mode: 'pairing', allow: [FRIEND.split('@')[0]], block: [] } } });
    await t.send({ chatId: STRANGER, senderId: STRANGER, text: 'let me in' });
    const code = /pairing code is ([A-Z0-9]+)\./.exec(t.replies(STRANGER).join('\n'))![1]!;
    expect(t.replies(OWNER).join('\n')).to.include(`Code: ${code}`);

    expect(await t.send({ chatId: FRIEND, senderId: FRIEND, text: `.approve ${code}` })).to.deep.equal(['Sorry, only the owners of this bot can approve pairing codes.']);
    expect(await t.send({ chatId: FRIEND, senderId: FRIEND, text: `.deny ${code}` })).to.deep.equal(['Sorry, only the owners of this bot can deny pairing codes.']);
    expect(t.app.bot.access.pending().map((p) => p.code)).to.deep.equal([code]);
    expect(t.app.bot.access.isApproved([STRANGER])).to.equal(false);
    expect(await t.send({ chatId: STRANGER, senderId: STRANGER, text: 'am I in?' }), 'still held').to.deep.equal([]);
    expect(t.model.requests, 'nothing of the stranger reached the model').to.have.length(0);

    const [approved] = await t.send({ chatId: OWNER, senderId: OWNER, text: `.approve ${code}` });
    expect(approved).to.match(/^Approved: .*can talk to me now/);
    expect(t.app.bot.access.isApproved([STRANGER])).to.equal(true);
  });
});
