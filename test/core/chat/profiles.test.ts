import { expect } from 'chai';
import { definePlugin, Type } from '../../../core/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { completion, failures, FakeGateway, lastUserText } from '../../fakes/openai-gateway.js';
import type { RecordedRequest } from '../../../app/testing/http-fake.js';
import { UNPACED_SENDS } from '../../helpers/chat.js';

const OWNER = '10000000001@s.whatsapp.net';
const ALICE = '10000000002@s.whatsapp.net';
const BOB = '10000000003@s.whatsapp.net';
const GROUP = '120363000000000088@g.us';
const BOT = '62899999999@s.whatsapp.net';

const toolNames = (req: RecordedRequest) => ((req.json?.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
const isChat = (req: RecordedRequest) => !/running summary/.test(JSON.stringify(req.json?.messages?.[0] ?? ''));

/** A plugin with two tools that say when they run. */
const ran: string[] = [];
const kit = definePlugin({
  name: 'kit',
  description: 'two tools',
  setup: () => ({
    tools: [
      { name: 'weather', description: 'the weather', parameters: Type.Object({}), effects: { outsideText: false, acts: 'nothing' }, run: () => (ran.push('weather'), 'sunny') },
      { name: 'lottery', description: 'draws numbers', parameters: Type.Object({}), effects: { outsideText: false, acts: 'nothing' }, run: () => (ran.push('lottery'), '7 13 42') },
    ],
  }),
});

/**
 * Chat profiles and money (issue 53): each chat's model, tools, answer length and monthly cap, set by an owner with
 * `.profile`; every turn's cost from the price table; caps enforced before the call; owners told at 80 % and when a
 * pricier failover leg served; `.why` for a recent answer, redacted for who asks.
 */
describe('chat profiles, money and .why (issue 53)', function () {
  this.timeout(30_000);
  let t: TestBot | undefined;
  const gateways: FakeGateway[] = [];
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await Promise.all(gateways.splice(0).map((g) => g.close()));
    ran.length = 0;
  });

  async function gateway(name: string, answer?: (req: RecordedRequest) => ReturnType<typeof completion> | undefined, models?: string[]) {
    const g = await FakeGateway.start(name, answer ? (req) => ({ status: 200, json: answer(req) ?? completion(`${name}: ${lastUserText(req)}`, { model: req.json?.model }) }) : undefined, models ? { models } : {});
    gateways.push(g);
    return g;
  }

  /** What the bot said back in the sender's own private chat (owner notices sent meanwhile go elsewhere). */
  const say = async (senderId: string, text: string, extra: Record<string, unknown> = {}) =>
    (await t!.push({ senderId, text, ...extra })).flatMap((a) => (a.type === 'text' && a.chatId === senderId ? [a.text] : []));

  const groupSay = (text: string, senderId = OWNER) => t!.send({ chatId: GROUP, senderId, senderName: senderId === OWNER ? 'Owner' : 'Alice', text: `@62899999999 ${text}`, mentions: [BOT] });

  it("answers a group with its profile's model while another chat keeps the default, and refuses a model the gateway does not list", async () => {
    const gw = await gateway('gw', undefined, ['small-model', 'big-model']);
    t = await startTestBot([], { ownIds: [BOT], env: { BASE_URL: gw.url, MODEL: 'small-model' }, config: { owners: ['10000000001'], groups: { policy: 'open' } } });
    expect((await groupSay('.profile model no-such-model'))[0]).to.match(/^The gateway does not offer a model "no-such-model", so nothing was changed/);
    expect((await groupSay('.profile model big-model'))[0]).to.match(/^Done: this chat's profile uses big-model/);
    await groupSay('hello group');
    await t.send({ senderId: ALICE, text: 'hello private' });
    const byText = (words: string) => gw.chats().filter(isChat).find((r) => JSON.stringify(r.json?.messages).includes(words))!;
    expect(byText('hello group').json?.model).to.equal('big-model');
    expect(byText('hello private').json?.model).to.equal('small-model');
    // A member sees the profile but cannot change it.
    const shown = await groupSay('.profile', ALICE);
    expect(shown[0]).to.contain('• Model: big-model');
    expect(await groupSay('.profile model small-model', ALICE)).to.deep.equal(['Sorry, only the owners of this bot can change a chat\'s profile (.profile shows it).']);
  });

  it('a leg lacking the profile model answers with its own, and .why says so', async () => {
    const primary = await gateway('primary', () => undefined, ['fast-model']);
    primary.next(failures.serverError);
    const second = await gateway('second', undefined, ['other-model']);
    t = await startTestBot([], {
      env: { PRIMARY_GATEWAY_API_KEY: 'pk-1', PRIMARY_GATEWAY_BASE_URL: primary.url, PRIMARY_GATEWAY_MODEL: 'fast-model', BASE_URL: second.url, MODEL: 'other-model' },
      config: { owners: ['10000000001'] },
    });
    await t.send('.profile model fast-model');
    await t.send('hi');
    expect(second.chats().filter(isChat).at(-1)!.json?.model).to.equal('other-model');
    const why = (await t.send('.why'))[0];
    expect(why).to.contain('• Answered by: leg second, model other-model');
    expect(why).to.contain('• Failover: yes — primary could not answer');
    expect(why).to.contain("This chat's profile asks for fast-model; leg second does not offer it, so it used its own model (other-model)");
  });

  it('a tool the profile does not allow is neither offered nor run, even when the model calls it', async () => {
    let calls = 0;
    const gw = await gateway('gw', (req) => {
      if (!isChat(req)) return undefined;
      const last = (req.json?.messages as Array<{ role: string }>).at(-1)!;
      if (last.role === 'tool') return completion('done');
      calls++;
      // The model insists on calling the disallowed tool by name.
      return completion(null, { toolCalls: [{ id: `c${calls}`, name: 'lottery', arguments: '{}' }] });
    });
    t = await startTestBot([kit], { ownIds: [BOT], env: { BASE_URL: gw.url }, config: { owners: ['10000000001'], groups: { policy: 'open' } } });
    expect((await groupSay('.profile tools weather'))[0]).to.match(/^Done: this chat's profile allows only weather\. Other tools are neither offered nor run there\./);
    await groupSay('draw numbers');
    const asked = gw.chats().filter(isChat)[0];
    expect(toolNames(asked)).to.deep.equal(['weather']);
    expect(ran).to.deep.equal([]);
    // Elsewhere (no profile) both are offered, and the call runs.
    await t.send({ senderId: ALICE, text: 'draw numbers' });
    expect(toolNames(gw.chats().filter(isChat).at(-2)!)).to.include.members(['weather', 'lottery', 'remember']);
    expect(ran).to.deep.equal(['lottery']);
    // Allowing the plugin by name allows its tools.
    const byPlugin = (await groupSay('.profile tools kit'))[0];
    expect(byPlugin).to.not.match(/Note/);
    await groupSay('draw again');
    expect(ran).to.deep.equal(['lottery', 'lottery']);
    // A misspelt name is kept (a plugin may offer it later) but said plainly; the core's own tool is known.
    const misspelt = (await groupSay('.profile tools wether remember'))[0];
    expect(misspelt).to.match(/^Done: this chat's profile allows only wether, remember\./);
    expect(misspelt).to.match(/Note: no plugin here offers a tool or plugin named wether: until one does, that name allows nothing\./);
    expect(misspelt).to.not.match(/named [^:]*remember/);
  });

  it('refuses a turn honestly once a person reaches the monthly money cap, without calling the model, after telling the owner at 80 %', async () => {
    const gw = await gateway('gw', (req) => completion('ok', { model: req.json?.model, usage: { prompt_tokens: 1000, completion_tokens: 1000 } }));
    t = await startTestBot([], {
      env: { BASE_URL: gw.url, MODEL: 'priced-model' },
      // 1000 in + 1000 out at 1 + 1 per thousand = 2.00 a turn; the cap 5.00: the third turn passes 80 %, then no more.
      // The owner's warning goes out at once: the cap is tested here, not the pace of notices.
      sendPacing: UNPACED_SENDS,
      config: { owners: ['10000000001'], money: { prices: { 'priced-model': { input: 1000, output: 1000 } }, caps: { personMonthly: 5 } }, sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 } },
    });
    const alice = (text: string) => say(ALICE, text);
    expect(await alice('one')).to.deep.equal(['ok']);
    expect(t.replies(OWNER)).to.deep.equal([]);
    expect(await alice('two')).to.deep.equal(['ok']);
    const warned = await t.until(() => t!.replies(OWNER).find((r) => r.includes('monthly AI cap')));
    expect(warned).to.match(/\+10000000002 has used 80 % of its monthly AI cap \(\$4\.00 of \$5\.00 in \d{4}-\d{2}\)\.$/);
    // Under the cap still: the turn runs (and passes it).
    expect(await alice('three')).to.deep.equal(['ok']);
    const reached = await t.until(() => t!.replies(OWNER).find((r) => r.includes('has reached')));
    expect(reached).to.match(/\+10000000002 has reached its monthly AI cap \(\$6\.00 of \$5\.00/);
    const before = gw.chats().length;
    const [refusal] = await alice('four');
    expect(refusal).to.match(/^Sorry, I cannot answer: you have reached this month's AI spending limit \(\$6\.00 of \$5\.00\)\. It starts again on \d{4}-\d{2}-01 \(UTC\); an owner can raise it\.$/);
    expect(gw.chats().length, 'the model is not called').to.equal(before);
    // Bob has his own cap; the owner is exempt.
    expect(await say(BOB, 'hi')).to.deep.equal(['ok']);
    expect(await t.send('hi')).to.deep.equal(['ok']);
    // .usage: Alice sees her own; the owner sees per chat, person and model.
    expect((await alice('.usage'))[0]).to.match(/^Your AI spending in \d{4}-\d{2}: \$6\.00 over 3 answers\. Your monthly cap: \$5\.00\.$/);
    const report = (await t.send('.usage'))[0];
    expect(report).to.match(/AI spending in \d{4}-\d{2}: \$10\.00 over 5 answers/);
    expect(report).to.contain('+10000000002: $6.00 over 3 answers').and.contain('priced-model: $10.00 over 5 answers');
  });

  it("a chat's own cap (.profile cap) holds with no cap in config.json: the owner hears when it is reached, then members are refused", async () => {
    const gw = await gateway('gw', (req) => completion('ok', { model: req.json?.model, usage: { prompt_tokens: 1000, completion_tokens: 1000 } }));
    t = await startTestBot([], {
      ownIds: [BOT],
      env: { BASE_URL: gw.url, MODEL: 'priced-model' },
      // 2.00 a turn against the group's cap of 3.00: the second turn passes it.
      config: { owners: ['10000000001'], groups: { policy: 'open' }, money: { prices: { 'priced-model': { input: 1000, output: 1000 } } }, sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 } },
    });
    expect((await groupSay('.profile cap 3'))[0]).to.match(/^Done/);
    expect(await groupSay('one', ALICE)).to.deep.equal(['ok']);
    // (t.send also returns the owner's notice, sent meanwhile to the owner's chat.)
    expect(await groupSay('two', ALICE)).to.include('ok');
    const reached = await t.until(() => t!.replies(OWNER).find((r) => r.includes('has reached')));
    expect(reached).to.contain(`the chat ${GROUP} has reached its monthly AI cap ($4.00 of $3.00`);
    const before = gw.chats().length;
    expect((await groupSay('three', ALICE))[0]).to.match(/^Sorry, I cannot answer: this chat has reached this month's AI spending limit \(\$4\.00 of \$3\.00\)/);
    expect(gw.chats().length, 'the model is not called').to.equal(before);
    // A private chat has no cap of its own.
    expect(await say(ALICE, 'hi')).to.deep.equal(['ok']);
  });

  it('tells the owner at 80 % of a cap before it is reached', async () => {
    const gw = await gateway('gw', (req) => completion('ok', { model: req.json?.model, usage: { prompt_tokens: 1000, completion_tokens: 1000 } }));
    t = await startTestBot([], {
      env: { BASE_URL: gw.url, MODEL: 'priced-model' },
      config: { owners: ['10000000001'], money: { prices: { 'priced-model': { input: 1000, output: 1000 } }, caps: { overallMonthly: 10 } }, sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 } },
    });
    for (const text of ['a', 'b', 'c']) await t.send({ senderId: ALICE, text });
    expect(t.replies(OWNER)).to.deep.equal([]);
    await t.send({ senderId: ALICE, text: 'd' });
    const notice = await t.until(() => t!.replies(OWNER).find((r) => r.includes('monthly AI cap')));
    expect(notice).to.match(/the bot as a whole has used 80 % of its monthly AI cap \(\$8\.00 of \$10\.00/);
  });

  it('tells the owner when a pricier failover leg served a turn, and .why names leg, model, tools, tokens and cost', async () => {
    const primary = await gateway('primary', () => undefined);
    primary.next(failures.serverError);
    const second = await gateway('second', (req) => completion('second answers', { model: req.json?.model, usage: { prompt_tokens: 2000, completion_tokens: 500 } }));
    t = await startTestBot([], {
      env: { PRIMARY_GATEWAY_API_KEY: 'pk-1', PRIMARY_GATEWAY_BASE_URL: primary.url, PRIMARY_GATEWAY_MODEL: 'gpt-4o-mini', BASE_URL: second.url, MODEL: 'gpt-4o' },
      config: { owners: ['10000000001'], sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 } },
    });
    expect(await say(ALICE, 'hi')).to.deep.equal(['second answers']);
    const notice = await t.until(() => t!.replies(OWNER).find((r) => r.includes('pricier provider')));
    expect(notice).to.contain('primary (gpt-4o-mini, $0.1500 in / $0.6000 out per million tokens) could not, so second (gpt-4o, $2.50 in / $10.00 out per million tokens) served a turn');
    const why = (await say(ALICE, '.why', { quoted: { id: 'x', senderId: BOT, fromBot: true, text: 'second answers' } }))[0];
    expect(why).to.contain('• Answered by: leg second, model gpt-4o');
    expect(why).to.contain('• Tokens: 2000 in (0 of them cached), 500 out');
    // 2000 × 2.50 + 500 × 10.00 per million = 0.0100
    expect(why).to.contain('• Cost: $0.0100');
    expect(why).to.contain('• Tools: none');
  });

  it(".why in a group hides another person's remembered facts (counted, never shown) and never shows a key", async () => {
    const gw = await gateway('gw');
    t = await startTestBot([], { ownIds: [BOT], env: { BASE_URL: gw.url, API_KEY: 'sk-secret-key-123456' }, config: { owners: ['10000000001'], groups: { policy: 'open' } } });
    await t.app.bot.memories.remember(GROUP, 'Alice is allergic to penicillin', ALICE);
    await t.app.bot.memories.remember(GROUP, 'Bob likes chess', BOB);
    await groupSay('what do you know?', BOB);
    const asked = gw.chats().filter(isChat).at(-1)!;
    expect(JSON.stringify(asked.json?.messages)).to.contain('penicillin');
    const why = (await t.send({ chatId: GROUP, senderId: BOB, text: '@62899999999 .why', mentions: [BOT] })).join('\n');
    expect(why).to.contain('"Bob likes chess"').and.contain('1 that was not yours (not shown)');
    expect(why).to.not.contain('penicillin').and.not.contain('sk-secret-key-123456');
    // The owner asking in the group sees no more of it there (the group reads the answer too).
    const ownerWhy = (await groupSay('.why')).join('\n');
    expect(ownerWhy).to.not.contain('penicillin').and.not.contain('chess');
    expect(ownerWhy).to.contain('2 that were not yours (not shown)');
  });

  it("a profile's answer length reaches the model as an instruction of that chat only", async () => {
    const gw = await gateway('gw');
    t = await startTestBot([], { ownIds: [BOT], env: { BASE_URL: gw.url }, config: { owners: ['10000000001'], groups: { policy: 'open' } } });
    expect(await groupSay('.profile length short')).to.deep.equal(['Done: answers in this chat are short from now on.']);
    await groupSay('tell me about the sea');
    await t.send({ senderId: ALICE, text: 'tell me about the sky' });
    const system = (words: string) => JSON.stringify(gw.chats().filter(isChat).find((r) => JSON.stringify(r.json?.messages).includes(words))!.json?.messages[0]);
    expect(system('the sea')).to.contain('answers in this chat to be short');
    expect(system('the sky')).to.not.contain('answers in this chat to be short');
  });

  it(".mydata holds a person's spending and the .why records of their questions, and delete removes them", async () => {
    const gw = await gateway('gw');
    t = await startTestBot([], { env: { BASE_URL: gw.url }, config: { owners: ['10000000001'] } });
    await say(ALICE, 'hello there');
    await say(BOB, 'hi from bob');
    await t.app.bot.idle();
    const mine = JSON.stringify(await t.app.bot.privacy.exportFor([ALICE]));
    expect(mine).to.contain('"askedBy":"10000000002@s.whatsapp.net"').and.not.contain('10000000003@s.whatsapp.net');
    expect(mine).to.match(/"turns":1/);
    await t.app.bot.privacy.deleteFor([ALICE]);
    expect(await say(ALICE, '.why')).to.deep.equal(['I have not answered anything here yet that I could explain. Reply to one of my answers with .why.']);
  });
});
