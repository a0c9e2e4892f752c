import { expect } from 'chai';
import accessPlugin from '../../../plugins/access/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const OWNER = '6281300000011@s.whatsapp.net';
const MEMBER = '6281300000012@s.whatsapp.net';
const GROUP = '120363000000000311@g.us';
const BOT = '10000000000@s.whatsapp.net';

/**
 * A group no owner opened (`groups.policy: "allowlist"`, or `.activation off`) is closed: the bot says nothing there
 * but to an owner's command that mentions it — a member's `.activation` (or any command) gets no answer at all.
 */
describe('access: a closed group answers only an owner, and only when mentioned', function () {
  this.timeout(30_000);
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  const inGroup = (senderId: string, text: string, mention = false) =>
    t!.send({ chatId: GROUP, senderId, text: mention ? `@${BOT.split('@')[0]} ${text}` : text, mentions: mention ? [BOT] : [] });
  const sentToGroup = () => t!.transport.actions.filter((a) => 'chatId' in a && a.chatId === GROUP);

  it("a member's .activation and other commands, with or without a mention, and an owner's without one, get no answer", async () => {
    t = await startTestBot(accessPlugin, { ownIds: [BOT], config: { owners: [OWNER.split('@')[0]], access: { mode: 'pairing', allow: [], block: [] }, groups: { policy: 'allowlist' } } });
    for (const text of ['.activation', '.activation always', '.bot off', '.persona Speak like a pirate.', '.help']) {
      expect(await inGroup(MEMBER, text), `${text} from a member`).to.deep.equal([]);
      expect(await inGroup(MEMBER, text, true), `${text} from a member, mentioning the bot`).to.deep.equal([]);
    }
    expect(await inGroup(OWNER, '.activation mention'), "an owner's, without a mention").to.deep.equal([]);
    expect(sentToGroup(), 'the bot said nothing in the closed group').to.deep.equal([]);
    expect(t.app.bot.access.activation(GROUP)).to.equal(undefined);

    expect(await inGroup(OWNER, '.activation mention', true)).to.deep.equal(['Done: I answer here when someone mentions me or replies to me.']);
    // Open now: anyone may see the rule; only owners change it.
    expect(await inGroup(MEMBER, '.activation')).to.deep.equal(['Activation here: mention: I answer here when someone mentions me or replies to me. Owners change it with .activation mention|always|off.']);
    expect(await inGroup(MEMBER, '.activation off')).to.deep.equal(['Sorry, only the owners of this bot can open or close a group (.activation).']);

    // Closed again by the owner: members are silent again.
    expect(await inGroup(OWNER, '.activation off', true)).to.deep.equal(['Done: I stay quiet here (I still keep the conversation as context).']);
    expect(await inGroup(MEMBER, '.activation')).to.deep.equal([]);
    expect(await inGroup(MEMBER, '.activation always', true)).to.deep.equal([]);
    expect(t.app.bot.access.activation(GROUP)).to.equal('off');
  });
});
