import { expect } from 'chai';
import controls from '../../../plugins/controls/index.js';
import pingPlugin from '../../../plugins/ping/index.js';
import premiumPlugin from '../../../plugins/premium/index.js';
import type { BotAction } from '../../../core/adapters/memory/memory-transport.js';
import { completion, FakeGateway, failures, lastUserText } from '../../fakes/openai-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const OWNER = '62811111111@s.whatsapp.net';
const ALICE = '62822222222@s.whatsapp.net';
const BOB = '62833333333@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const BOT = '62899999999@s.whatsapp.net';
const KEY = 'sk-controls-secret-123';

const texts = (actions: BotAction[]) => actions.filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text').map((a) => a.text);

describe('in-chat controls (.reset, .forget, .status, disabled plugins, .help)', () => {
  let gw: FakeGateway;
  let t: TestBot;

  beforeEach(async () => {
    gw = await FakeGateway.start('primary');
  });
  afterEach(async () => {
    await t?.stop();
    await gw.close();
  });

  async function start(config: Record<string, unknown> = {}, plugins = [controls, pingPlugin], env: Record<string, string> = {}) {
    t = await startTestBot(plugins, {
      env: { API_KEY: KEY, BASE_URL: gw.url, MODEL: 'main-model', ...env },
      config: { owners: ['62811111111'], groups: { commandsWithoutMention: true }, ...config },
      ownIds: [BOT],
    });
  }

  /** The user/assistant messages of the last request the gateway received. */
  const lastPrompt = () => (gw.chats().at(-1)?.json?.messages ?? []) as Array<{ role: string; content: string }>;

  it('.reset starts the conversation fresh and keeps what the bot remembers', async () => {
    await start();
    await t.transport.push({ senderId: ALICE, text: 'my cat is called Miso' });
    await t.app.bot.memories.remember(ALICE, 'Alice likes tea');
    const reply = texts(await t.transport.push({ senderId: ALICE, text: '.reset' }));
    expect(reply[0]).to.match(/starts fresh \(2 earlier messages/);
    await t.transport.push({ senderId: ALICE, text: 'what is my cat called?' });
    const prompt = lastPrompt();
    // What Alice (not an owner) had remembered is content with who asked for it, before the turns.
    expect(prompt.filter((m) => m.role !== 'system').map((m) => m.content)).to.have.length(2);
    expect(prompt.at(-1)!.content).to.equal('what is my cat called?');
    expect(prompt[1].content).to.match(/^\[Content: facts people in this chat asked you to remember/).and.include('Alice likes tea (asked by 62822222222)');
    // Another chat's history is untouched.
    await t.transport.push({ senderId: BOB, text: 'hello from bob' });
    await t.transport.push({ senderId: BOB, text: 'second' });
    expect(lastPrompt().filter((m) => m.role === 'user')).to.have.length(2);
  });

  it('.reset in a group: only owners and group admins', async () => {
    await start();
    await t.transport.push({ chatId: GROUP, senderId: ALICE, text: `@62899999999 remember the plan`, mentions: [BOT] });
    const refused = texts(await t.transport.push({ chatId: GROUP, senderId: ALICE, text: '.reset' }));
    expect(refused[0]).to.match(/only the group admins and the bot owners/);
    expect(await t.app.bot.histories.recent(GROUP)).to.not.have.length(0);
    t.transport.groupAdmins.set(GROUP, [ALICE]);
    expect(texts(await t.transport.push({ chatId: GROUP, senderId: ALICE, text: '.reset' }))[0]).to.match(/starts fresh/);
    expect(await t.app.bot.histories.recent(GROUP)).to.have.length(0);
    await t.transport.push({ chatId: GROUP, senderId: BOB, text: `@62899999999 hi`, mentions: [BOT] });
    expect(texts(await t.transport.push({ chatId: GROUP, senderId: OWNER, text: '.reset' }))[0]).to.match(/starts fresh \(2 earlier/);
  });

  it('.forget lists numbered facts and removes one, or all', async () => {
    await start();
    for (const fact of ['likes tea', 'lives in Bandung', 'has a cat']) await t.app.bot.memories.remember(ALICE, fact);
    const list = texts(await t.transport.push({ senderId: ALICE, text: '.forget' }))[0];
    expect(list).to.include('1. likes tea\n2. lives in Bandung\n3. has a cat');
    expect(texts(await t.transport.push({ senderId: ALICE, text: '.forget 2' }))[0]).to.equal('Forgotten: "lives in Bandung".');
    expect((await t.app.bot.memories.facts(ALICE)).map((f) => f.text)).to.deep.equal(['likes tea', 'has a cat']);
    expect(texts(await t.transport.push({ senderId: ALICE, text: '.forget 7' }))[0]).to.match(/no number 7: I remember 2 things/);
    expect(texts(await t.transport.push({ senderId: ALICE, text: '.forget 0' }))[0]).to.match(/no number 0/);
    expect(await t.app.bot.memories.facts(ALICE)).to.have.length(2);
    expect(texts(await t.transport.push({ senderId: ALICE, text: '.forget all' }))[0]).to.match(/all 2 things/);
    expect(await t.app.bot.memories.facts(ALICE)).to.have.length(0);
    expect(texts(await t.transport.push({ senderId: ALICE, text: '.forget' }))[0]).to.equal('I remember nothing about this chat.');
  });

  it('.forget in a group removes nothing for a plain member; an admin may', async () => {
    await start();
    await t.app.bot.memories.remember(GROUP, 'the trip is in May');
    expect(texts(await t.transport.push({ chatId: GROUP, senderId: BOB, text: '.forget all' }))[0]).to.match(/only the group admins/);
    expect(texts(await t.transport.push({ chatId: GROUP, senderId: BOB, text: '.forget 1' }))[0]).to.match(/only the group admins/);
    expect(await t.app.bot.memories.facts(GROUP)).to.have.length(1);
    t.transport.groupAdmins.set(GROUP, [BOB]);
    expect(texts(await t.transport.push({ chatId: GROUP, senderId: BOB, text: '.forget 1' }))[0]).to.equal('Forgotten: "the trip is in May".');
  });

  it('the forget tool removes the facts the user names, and refuses a plain group member', async () => {
    await start();
    await t.app.bot.memories.remember(ALICE, 'Alice likes tea');
    await t.app.bot.memories.remember(ALICE, 'Alice works nights');
    gw.next(
      { status: 200, json: completion(null, { toolCalls: [{ id: 'c1', name: 'forget', arguments: JSON.stringify({ about: 'likes TEA' }) }] }) },
      (req) => ({ status: 200, json: completion(`ok: ${JSON.stringify(req.json?.messages?.at(-1)?.content)}`) }),
    );
    const reply = texts(await t.transport.push({ senderId: ALICE, text: 'forget that I like tea' }))[0];
    expect(reply).to.include('Forgotten');
    expect((await t.app.bot.memories.facts(ALICE)).map((f) => f.text)).to.deep.equal(['Alice works nights']);
    expect(gw.chats()[0].json?.tools.map((tool: { function: { name: string } }) => tool.function.name)).to.include('forget');

    // (An owner's fact: a member's own would be content that keeps the forget tool from running at all.)
    await t.app.bot.memories.remember(GROUP, 'the trip is in May', OWNER);
    gw.next(
      { status: 200, json: completion(null, { toolCalls: [{ id: 'c2', name: 'forget', arguments: JSON.stringify({ about: 'trip' }) }] }) },
      (req) => ({ status: 200, json: completion(`tool said ${String(req.json?.messages?.at(-1)?.content)}`) }),
    );
    const group = texts(await t.transport.push({ chatId: GROUP, senderId: BOB, text: '@62899999999 forget the trip', mentions: [BOT] }))[0];
    expect(group).to.match(/Not forgotten/);
    expect(await t.app.bot.memories.facts(GROUP)).to.have.length(1);
  });

  it('.status: owners get link, legs with state, usage and version (never a key); others a polite no', async () => {
    await start();
    await t.transport.push({ senderId: ALICE, text: 'hello' });
    const refused = texts(await t.transport.push({ senderId: ALICE, text: '.status' }));
    expect(refused).to.deep.equal(['Sorry, .status is only for the owners of this bot.']);
    const status = texts(await t.transport.push({ senderId: OWNER, text: '.status' }))[0];
    expect(status).to.match(/version \d+\.\d+\.\d+, up \d+ s/);
    expect(status).to.include('WhatsApp: linked as 62899999999@s.whatsapp.net');
    expect(status).to.match(/🟢 second \(main-model\): healthy/);
    expect(status).to.match(/second · main-model: 15 tokens in 1 request/);
    expect(status).to.not.include(KEY);
    // A rejected key turns the leg red with the reason in plain words.
    gw.next(failures.badKey);
    await t.transport.push({ senderId: ALICE, text: 'again' });
    const after = texts(await t.transport.push({ senderId: OWNER, text: '.status' }))[0];
    expect(after).to.match(/🔴 second \(main-model\): rejected: the key was rejected \(HTTP 401 invalid_api_key\)/);
    expect(after).to.match(/✘ chat/);
  });

  it('.status asked in a group goes to the owner\'s private chat', async () => {
    await start();
    const actions = await t.transport.push({ chatId: GROUP, senderId: OWNER, text: '.status' });
    const sent = actions.filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text');
    expect(sent.map((a) => a.chatId)).to.deep.equal([OWNER, GROUP]);
    expect(sent[0].text).to.match(/status\* \(version/);
    expect(sent[1].text).to.equal('I sent you the status in our private chat.');
    expect(sent[1].text).to.not.include('main-model');
    const other = await t.transport.push({ chatId: GROUP, senderId: BOB, text: '.status' });
    expect(other.map((a) => (a as { chatId: string }).chatId)).to.deep.equal([GROUP]);
    expect(texts(other)[0]).to.match(/only for the owners/);
  });

  it('a disabled plugin\'s command says the owner turned it off; unknown commands stay unknown', async () => {
    await start({ plugins: { ping: { enabled: false } } });
    expect(texts(await t.transport.push({ senderId: ALICE, text: '.ping' }))[0]).to.match(/^\.ping is turned off: the owner switched off ping/);
    expect(texts(await t.transport.push({ senderId: ALICE, text: '.pong' }))[0]).to.match(/^Unknown command \.pong/);
    expect(gw.chats()).to.have.length(0);
  });

  it('.help lists the controls and the premium phrase (with a premium model configured), and without one says it is off and why', async () => {
    await start({}, [controls, pingPlugin, premiumPlugin], { PREMIUM_MODEL: 'big-model' });
    const help = texts(await t.transport.push({ senderId: ALICE, text: '.help' }))[0];
    expect(help).to.include('.reset: ');
    expect(help).to.include('.forget [<number>|all]: ');
    expect(help).to.include('"use the premium model: <question>": answer this one message with the premium model');
    await t.stop();
    await start({}, [controls, pingPlugin, premiumPlugin]);
    const without = texts(await t.transport.push({ senderId: ALICE, text: '.help' }))[0];
    expect(without).to.not.include('"use the premium model: <question>": answer');
    expect(without).to.include('.reset: ');
    expect(without).to.match(/Off here: "use the premium model: <question>" \(no PRIMARY_GATEWAY_PREMIUM_MODEL or PREMIUM_MODEL set\)/);
  });

  it('tells a rejected key from a used-up quota', async () => {
    await start();
    gw.next(failures.badKey);
    expect(texts(await t.transport.push({ senderId: ALICE, text: 'hi' }))[0]).to.match(/rejected my access key/);
    await t.stop();
    await gw.close();
    gw = await FakeGateway.start('primary');
    await start();
    gw.next(failures.insufficientQuota);
    const used = texts(await t.transport.push({ senderId: ALICE, text: 'hi' }))[0];
    expect(used).to.match(/used up their quota/);
    expect(used).to.not.match(/rejected/);
    expect(lastUserText(gw.chats()[0])).to.equal('hi');
  });
});
