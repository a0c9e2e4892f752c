import { expect } from 'chai';
import { contentOf, lastText, type ModelRequest } from '../../../app/testing/fake-model.js';
import type { TestBot } from '../../../app/testing/test-kit.js';
import { actionsIn, ALICE, BOB, FAMILY, groupLine, OWN, ownNumberBot, selfLine, WORK } from './helpers.js';

/** A model that calls catch_up with `args` when asked "catch me up", and then answers with what the tool returned. */
function catchUpModel(args: Record<string, unknown> = {}) {
  return (request: ModelRequest) => {
    const last = request.messages.at(-1);
    if (last?.role === 'tool') return `Here is what you missed:\n${contentOf(lastText(request))}`;
    if (/catch me up|what did i miss/i.test(lastText(request)) && request.tools.includes('catch_up')) return { tool: 'catch_up', args };
    return `model: ${lastText(request)}`;
  };
}

describe('catchup: watched chats are read-only, unwatched chats are never read (self-chat mode)', function () {
  this.timeout(30_000);
  let bot: TestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it('.watch in "Message yourself" watches a chat; its messages (commands, mentions, the owner\'s own typing, a document) are kept and nothing is ever sent there', async () => {
    bot = await ownNumberBot({ model: catchUpModel({ chat: 'Family' }), config: { groups: { policy: 'open' } } });
    expect((await bot.send(selfLine('.watch Family'))).join('\n')).to.match(/Watching Family/);
    await bot.push(groupLine(FAMILY, ALICE, 'Alice', 'Dinner at 7 on Sunday?'));
    await bot.push(groupLine(FAMILY, ALICE, 'Alice', '.help'));
    await bot.push(groupLine(FAMILY, BOB, 'Bob', `@${OWN.split('@')[0]} can you bring wine?`, { mentions: [OWN] }));
    await bot.push(groupLine(FAMILY, OWN, 'me', 'I will be there', { fromMe: true }));
    await bot.push(groupLine(FAMILY, BOB, 'Bob', 'menu attached', { media: { kind: 'document', mimetype: 'application/pdf', fileName: 'menu.pdf', download: () => Promise.reject(new Error('a watched chat must cost no download')) } }));
    expect(actionsIn(bot, FAMILY), 'the bot did something in a watched chat').to.deep.equal([]);
    expect(bot.model.requests, 'a watched chat reached the model').to.have.length(0);
    const [answer] = await bot.send(selfLine('catch me up on Family'));
    expect(answer).to.include('Dinner at 7 on Sunday?').and.include('.help').and.include('can you bring wine?').and.include('I will be there').and.include('[document: menu.pdf] menu attached');
    expect(answer).to.match(/Family · Alice · \d{4}-\d\d-\d\d \d\d:\d\d UTC/).and.match(/Family · you · /);
    expect(actionsIn(bot, FAMILY)).to.deep.equal([]);
  });

  it('a watched group stays silent even where the access rules open it (an .activation always), and in bot mode too', async () => {
    bot = await ownNumberBot({ config: { account: { mode: 'bot' }, groups: { policy: 'open' } } });
    await bot.send(selfLine('.watch Family'));
    await bot.push(groupLine(FAMILY, ALICE, 'Alice', `@${OWN.split('@')[0]} hello?`, { mentions: [OWN] }));
    await bot.push(groupLine(FAMILY, OWN, 'me', '.bot on', { fromMe: true }));
    await bot.push(groupLine(FAMILY, ALICE, 'Alice', `@${OWN.split('@')[0]} still there?`, { mentions: [OWN] }));
    expect(actionsIn(bot, FAMILY)).to.deep.equal([]);
    expect(bot.model.requests).to.have.length(0);
  });

  it('an unwatched chat is never read: what it said before .watch is nowhere, and .unwatch stops reading and drops what was kept', async () => {
    bot = await ownNumberBot({ model: catchUpModel({}) });
    await bot.push(groupLine(WORK, ALICE, 'Alice', 'the invoice number is 4711'));
    await bot.send(selfLine('.watch Work'));
    await bot.push(groupLine(WORK, BOB, 'Bob', 'meeting moved to 3pm'));
    const [first] = await bot.send(selfLine('catch me up'));
    expect(first).to.include('meeting moved to 3pm').and.not.include('4711');
    expect((await bot.send(selfLine('.unwatch Work'))).join('\n')).to.match(/Stopped watching Work; the 1 message\(s\) I kept of it are deleted/);
    await bot.push(groupLine(WORK, BOB, 'Bob', 'after unwatch'));
    await bot.send(selfLine('.watch Work'));
    const [second] = await bot.send(selfLine('catch me up'));
    expect(second).to.not.include('meeting moved').and.not.include('after unwatch').and.not.include('4711');
  });

  it('.watch and .unwatch are refused outside "Message yourself", even for an owner; the self-chat cannot be watched', async () => {
    bot = await ownNumberBot({ config: { access: { mode: 'everyone', allow: ['6281200000002'] } } });
    const [inDm] = await bot.send({ chatId: ALICE, senderId: ALICE, text: '.watch Family' });
    expect(inDm).to.match(/Message yourself/);
    expect((await bot.send(selfLine(`.watch ${OWN}`))).join('\n')).to.match(/I know no chat named/);
    expect((await bot.send(selfLine('.watch'))).join('\n')).to.match(/No chat is watched/);
  });

  it('the catch_up tool is offered to an owner in "Message yourself" only: not in another chat, not to anyone else', async () => {
    bot = await ownNumberBot({ config: { access: { mode: 'everyone', allow: ['6281200000002'] } } });
    await bot.send(selfLine('hello'));
    await bot.send({ chatId: ALICE, senderId: ALICE, text: 'hello' });
    expect(bot.model.requests.map((r) => r.tools.includes('catch_up'))).to.deep.equal([true, false]);
  });
});
