import { expect } from 'chai';
import accessPlugin from '../../../plugins/access/index.js';
import { FakeGateway, completion } from '../../fakes/openai-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const texts = (actions: Array<{ type: string }>) => actions.filter((a) => a.type === 'text').map((a) => (a as unknown as { text: string }).text);

describe('how model answers go out: WhatsApp formatting, long answers in parts, silence', () => {
  let gateway: FakeGateway;
  let t: TestBot | undefined;
  const OWNER = '10000000001';
  const BOT = '62899999990';
  const MEMBER = '10000000002';
  const GROUP = '120363000000000001@g.us';

  beforeEach(async () => {
    gateway = await FakeGateway.start('gw');
  });
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await gateway.close();
  });

  const start = () =>
    startTestBot([accessPlugin], {
      env: { API_KEY: 'sk-test-123456', BASE_URL: `${gateway.url}/v1`, MODEL: 'main' },
      config: { targetUserIds: [BOT], owners: [OWNER], access: { mode: 'everyone', allow: [], block: [] }, groups: { policy: 'allowlist' } },
    });

  it("sends the model's Markdown as WhatsApp formatting, code untouched, and keeps what was said in the history", async () => {
    t = await start();
    gateway.next({ status: 200, json: completion('## Plan\n\n**Step one**: read [the guide](https://example.org/guide).\n\n```sh\nrm -rf **build**\n```') });
    const sent = texts(await t.transport.push({ text: 'what now?' }));
    expect(sent).to.deep.equal(['*Plan*\n\n*Step one*: read the guide (https://example.org/guide).\n\n```\nrm -rf **build**\n```']);
    const history = await t.app.bot.histories.recent(`${OWNER}@s.whatsapp.net`);
    expect(history.at(-1)?.text).to.equal(sent[0]);
  });

  it('sends a long answer as several messages cut at paragraphs, nothing lost', async () => {
    t = await start();
    const paragraphs = Array.from({ length: 10 }, (_, i) => `**Part ${i}**: ${Array.from({ length: 110 }, (_, j) => `w${i}.${j}`).join(' ')}.`);
    gateway.next({ status: 200, json: completion(paragraphs.join('\n\n')) });
    const sent = texts(await t.transport.push({ text: 'tell me everything' }));
    expect(sent.length).to.be.greaterThan(1);
    for (const part of sent) expect(part.length).to.be.at.most(4000);
    const converted = paragraphs.map((p) => p.replace(/\*\*(Part \d+)\*\*/, '*$1*'));
    for (const part of sent) for (const piece of part.split('\n\n')) expect(converted).to.include(piece);
    expect(sent.join('\n\n')).to.equal(converted.join('\n\n'));
  });

  it(`sends nothing (and no error) when the model answers the no-reply token, in a group set to answer every message`, async () => {
    t = await start();
    expect(texts(await t.transport.push({ chatId: GROUP, isGroup: true, senderId: OWNER, text: `@${BOT} .activation always`, mentions: [`${BOT}@s.whatsapp.net`] }))[0]).to.match(/every message/);
    gateway.next({ status: 200, json: completion('NO_REPLY') });
    const actions = await t.transport.push({ chatId: GROUP, isGroup: true, senderId: MEMBER, text: 'lunch at noon, everyone?' });
    expect(texts(actions)).to.deep.equal([]);
    const request = gateway.chats().at(-1)!.json;
    expect(request.messages[0].content).to.include('answer exactly NO_REPLY');
    // The next message that wants an answer gets one.
    const [answer] = texts(await t.transport.push({ chatId: GROUP, isGroup: true, senderId: MEMBER, text: 'bot, what is 2+2?' }));
    expect(answer).to.include('what is 2+2?');
    expect(t.logs().some((l) => l.level >= 50)).to.equal(false);
  });

  it('offers the no-reply token only where the bot reads every message; a private answer of it alone is still not sent', async () => {
    t = await start();
    gateway.next({ status: 200, json: completion('`NO_REPLY`') });
    expect(texts(await t.transport.push({ text: 'ok thanks' }))).to.deep.equal([]);
    expect(gateway.chats()[0].json.messages[0].content).not.to.include('NO_REPLY');
    // A word that merely contains the token is an answer like any other.
    gateway.next({ status: 200, json: completion('NO_REPLY is what I would say to spam.') });
    expect(texts(await t.transport.push({ text: 'what would you say?' }))).to.deep.equal(['NO_REPLY is what I would say to spam.']);
  });
});
