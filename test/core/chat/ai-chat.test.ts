import { expect } from 'chai';
import { storedHistory } from '../../helpers/disk-text.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { definePlugin } from '../../../core/index.js';
import premiumPlugin from '../../../plugins/premium/index.js';
import pingPlugin from '../../../plugins/ping/index.js';
import { FakeGateway, completion, failures, lastUserText } from '../../fakes/openai-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { storeDatabaseText } from '../../helpers/disk-text.js';

const text = (actions: Array<{ type: string }>) => actions.filter((a) => a.type === "text").map((a) => (a as unknown as { text: string }).text);

describe('AI chat through the provider chain', () => {
  let primary: FakeGateway;
  let second: FakeGateway;
  let t: TestBot | undefined;

  beforeEach(async () => {
    [primary, second] = await Promise.all([FakeGateway.start('primary'), FakeGateway.start('second')]);
  });
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await Promise.all([primary.close(), second.close()]);
  });

  const env = (extra: Record<string, string> = {}) => ({
    PRIMARY_GATEWAY_API_KEY: 'pk-primary-secret',
    PRIMARY_GATEWAY_BASE_URL: primary.url,
    PRIMARY_GATEWAY_MODEL: 'main-a',
    PRIMARY_GATEWAY_PREMIUM_MODEL: 'premium-a',
    API_KEY: 'sk-second-secret',
    BASE_URL: `${second.url}/v1`,
    MODEL: 'main-b',
    UPSTREAM_TIMEOUT_MS: '3000',
    ...extra,
  });

  it('answers free text with the main model, with bot name, date and the chat history in the prompt', async () => {
    t = await startTestBot(pingPlugin, { env: env(), config: { botName: 'Jarvis' } });
    // The date fixed: the prompt's date and the one expected are the same day even across midnight (UTC).
    const clock = t.useClock(['Date']);
    expect(text(await t.transport.push({ text: 'my name is Ana' }))).to.deep.equal(['primary: my name is Ana']);
    expect(text(await t.transport.push({ text: 'what is my name?' }))).to.deep.equal(['primary: what is my name?']);
    const req = primary.chats()[1].json;
    expect(req.model).to.equal('main-a');
    expect(req.messages[0].role).to.equal('system');
    expect(req.messages[0].content).to.include('You are Jarvis');
    expect(req.messages[0].content).to.include(new Date(clock.now()).toISOString().slice(0, 10));
    expect(req.messages.slice(1).map((m: { role: string; content: string }) => `${m.role}:${m.content}`)).to.deep.equal([
      'user:my name is Ana',
      'assistant:primary: my name is Ana',
      'user:what is my name?',
    ]);
    await t.app.bot.histories.flush();
    // The store database holds everything after a flush (data/history, the earlier layout, is not written).
    expect(existsSync(path.join(t.dir, 'data', 'history'))).to.equal(false);
    expect(storedHistory(path.join(t.dir, 'data'), '10000000001@s.whatsapp.net')).to.have.length(4);
  });

  it('switches to the second gateway on a 429 without a word about it in the reply', async () => {
    primary.next(failures.insufficientQuota);
    t = await startTestBot([], { env: env() });
    expect(text(await t.transport.push({ text: 'hi there' }))).to.deep.equal(['second: hi there']);
    expect(text(await t.transport.push({ text: 'again' }))).to.deep.equal(['second: again']);
    expect(primary.chats()).to.have.length(1);
  });

  it('tells the user one short honest sentence when every leg fails, and keeps answering commands', async () => {
    primary.next(failures.serverError);
    second.next(failures.serverError);
    t = await startTestBot(pingPlugin, { env: env() });
    const [reply] = text(await t.transport.push({ text: 'hello?' }));
    expect(reply).to.equal('I cannot reach any AI provider right now. Please try again in a few minutes.');
    expect(reply).not.to.include('org-');
    expect(text(await t.transport.push({ text: '.ping' }))[0]).to.match(/^pong/);
  });

  it('has the question on disk before the answer is sent, and keeps it when every provider fails', async () => {
    t = await startTestBot([], { env: env() });
    const app = t;
    // On disk because the turn is answered or ends, never merely because the model was slow.
    app.app.bot.histories.heldAtMostMs = 60_000;
    const historyOnDisk = () => storedHistory(path.join(app.dir, 'data')).map((e) => e.text).join('\n');
    // What a crash at the moment of sending would leave: read when the transport is asked to send.
    const seenAtSend: string[] = [];
    const record = app.transport.actions.push.bind(app.transport.actions);
    app.transport.actions.push = (...actions) => {
      seenAtSend.push(historyOnDisk());
      return record(...actions);
    };
    expect(text(await app.transport.push({ text: 'which platform for the 8:15?' }))).to.deep.equal(['primary: which platform for the 8:15?']);
    expect(seenAtSend[0]).to.include('which platform for the 8:15?');
    primary.next(failures.serverError);
    second.next(failures.serverError);
    expect(text(await app.transport.push({ text: 'and the return train?' }))[0]).to.match(/cannot reach any AI provider/);
    expect(seenAtSend[1]).to.include('and the return train?');
    expect(historyOnDisk()).to.include('and the return train?');
  });

  it('commits a quick turn\'s question and answer in one transaction', async () => {
    t = await startTestBot([], { env: env() });
    const app = t;
    const histories = app.app.bot.histories;
    // However slow this machine is today, the turn counts as quick (a slower model has its question written alone).
    histories.heldAtMostMs = 60_000;
    await histories.whenIdle();
    const before = histories.foldsWritten;
    expect(text(await app.transport.push({ text: 'which platform for the 8:15?' }))).to.deep.equal(['primary: which platform for the 8:15?']);
    await app.app.bot.idle();
    expect(histories.foldsWritten - before, 'one commit for the question and the answer').to.equal(1);
    expect(storedHistory(path.join(app.dir, 'data')).map((e) => e.text)).to.deep.equal(['which platform for the 8:15?', 'primary: which platform for the 8:15?']);
  });

  it('has the question on disk before a tool runs (it may send or act)', async () => {
    const seenByTool: string[] = [];
    let dir = '';
    const lookout = definePlugin({
      name: 'lookout',
      description: 'lookout',
      setup: () => ({
        tools: [
          {
            name: 'look',
            description: 'look around',
            parameters: { type: 'object', properties: {} },
            effects: { outsideText: false, acts: 'nothing' },
            run: () => {
              seenByTool.push(storedHistory(path.join(dir, 'data')).map((e) => e.text).join('\n'));
              return { seen: 'a train' };
            },
          },
        ],
      }),
    });
    primary.next({ status: 200, json: completion(null, { toolCalls: [{ id: 'c1', name: 'look', arguments: '{}' }] }) }, { status: 200, json: completion('I see a train') });
    t = await startTestBot(lookout, { env: env() });
    dir = t.dir;
    // The question is not written for being slow: only because a tool is about to run.
    t.app.bot.histories.heldAtMostMs = 60_000;
    expect(text(await t.transport.push({ text: 'what do you see?' }))).to.deep.equal(['I see a train']);
    expect(seenByTool).to.deep.equal(['what do you see?']);
  });

  it('uses the premium model for the one message that asks for it, and says so when none is configured', async () => {
    t = await startTestBot(premiumPlugin, { env: env() });
    expect(text(await t.transport.push({ text: 'use the premium model: explain tides' }))).to.deep.equal(['primary: explain tides']);
    await t.transport.push({ text: 'and the moon?' });
    expect(primary.chats().map((r) => r.json.model)).to.deep.equal(['premium-a', 'main-a']);
    await t.stop();
    t = await startTestBot(premiumPlugin, { env: env({ PRIMARY_GATEWAY_PREMIUM_MODEL: '' }) });
    const [reply] = text(await t.transport.push({ text: 'pakai model premium: apa itu pasang surut?' }));
    expect(reply).to.match(/No premium model is configured/);
  });

  it('runs the tool-call loop with the chat and sender bound by the core, not by the model', async () => {
    const calls: Array<{ args: Record<string, unknown>; chatId: string; senderId: string }> = [];
    const dice = definePlugin({
      name: 'dice',
      description: 'dice',
      setup: () => ({
        tools: [
          {
            name: 'roll',
            description: 'roll a die',
            parameters: { type: 'object', properties: { chatId: { type: 'string' } } },
            effects: { outsideText: false, acts: 'nothing' },
            run: (args, call) => {
              calls.push({ args, chatId: call.chatId, senderId: call.senderId });
              return { rolled: 4 };
            },
          },
        ],
      }),
    });
    primary.next(
      { status: 200, json: completion(null, { toolCalls: [{ id: 'c1', name: 'roll', arguments: '{"chatId":"victim@s.whatsapp.net"}' }] }) },
      (req) => ({ status: 200, json: completion(`tool said ${req.json.messages.at(-1).content}`) }),
    );
    t = await startTestBot(dice, { env: env() });
    expect(text(await t.transport.push({ text: 'roll for me' }))).to.deep.equal(['tool said {"rolled":4}']);
    expect(calls).to.deep.equal([{ args: { chatId: 'victim@s.whatsapp.net' }, chatId: '10000000001@s.whatsapp.net', senderId: '10000000001@s.whatsapp.net' }]);
    expect(primary.chats()[0].json.tools.map((x: { function: { name: string } }) => x.function.name)).to.include.members(['remember', 'roll']);
  });

  it('appends the sources a tool cited when the answer names none of them, and leaves an answer that does alone', async () => {
    const lookup = definePlugin({
      name: 'lookup',
      description: 'cites',
      setup: () => ({ tools: [{ name: 'look', description: 'x', parameters: { type: 'object', properties: {} }, run: (_args, call) => { call.cite(['a.example/x', 'b.example/y']); return 'facts'; } }] }),
    });
    const toolCall = { status: 200, json: completion(null, { toolCalls: [{ id: 'c1', name: 'look', arguments: '{}' }] }) };
    primary.next(toolCall, { status: 200, json: completion('It is 42.') }, toolCall, { status: 200, json: completion('It is 42, see a.example/x') });
    t = await startTestBot(lookup, { env: env() });
    expect(text(await t.transport.push({ text: 'q1' }))).to.deep.equal(['It is 42.\n\nSources:\n[1] a.example/x\n[2] b.example/y']);
    expect(text(await t.transport.push({ text: 'q2' }))).to.deep.equal(['It is 42, see a.example/x']);
  });

  it('returns a tool error to the model as text instead of failing the message', async () => {
    const broken = definePlugin({
      name: 'broken',
      description: 'broken tool',
      setup: () => ({ tools: [{ name: 'explode', description: 'x', parameters: { type: 'object', properties: {} }, run: () => { throw new Error('disk on fire'); } }] }),
    });
    primary.next(
      { status: 200, json: completion(null, { toolCalls: [{ id: 'c1', name: 'explode', arguments: '{}' }] }) },
      (req) => ({ status: 200, json: completion(`sorry: ${req.json.messages.at(-1).content}`) }),
    );
    t = await startTestBot(broken, { env: env() });
    expect(text(await t.transport.push({ text: 'do it' }))).to.deep.equal(['sorry: Error: explode failed: disk on fire']);
  });

  it('remembers a fact through the remember tool, across a restart', async () => {
    primary.next(
      { status: 200, json: completion(null, { toolCalls: [{ id: 'm1', name: 'remember', arguments: '{"fact":"Ana is allergic to peanuts"}' }] }) },
      { status: 200, json: completion('Noted.') },
    );
    // An owner's facts are instructions in the system prompt (anyone else's are content: see provenance.test).
    t = await startTestBot([], { env: env(), config: { owners: ['10000000001'] } });
    expect(text(await t.transport.push({ text: 'remember that I am allergic to peanuts' }))).to.deep.equal(['Noted.']);
    t = await t.restart();
    await t.transport.push({ text: 'what should I avoid?' });
    expect(primary.chats().at(-1)!.json.messages[0].content).to.include('Ana is allergic to peanuts');
    // On disk in the store database (its file and WAL), not only in the running bot.
    expect(await storeDatabaseText(path.join(t.dir, 'data'))).to.include('Ana is allergic to peanuts');
  });

  it('the system prompt follows a new fact, a new bot name and the kind of chat at the next message', async () => {
    t = await startTestBot([], { env: env(), config: { botName: 'Jarvis', owners: ['10000000001'] } });
    const system = () => primary.chats().at(-1)!.json.messages[0].content as string;
    await t.transport.push({ text: 'hello' });
    expect(system()).to.include('You are Jarvis').and.not.to.include('likes green tea');
    await t.app.bot.memories.remember('10000000001@s.whatsapp.net', 'Ana likes green tea', '10000000001@s.whatsapp.net');
    await t.transport.push({ text: 'what do I like?' });
    expect(system()).to.include('- Ana likes green tea');
    await t.app.bot.memories.remember('10000000001@s.whatsapp.net', 'Ana lives in Lisbon', '10000000001@s.whatsapp.net');
    await t.transport.push({ text: 'and where do I live?' });
    expect(system()).to.include('- Ana likes green tea\n- Ana lives in Lisbon');
    t.app.bot.setConfig({ ...t.app.bot.config, botName: 'Friday' });
    await t.transport.push({ text: 'who are you?' });
    expect(system()).to.include('You are Friday').and.not.to.include('Jarvis');
    expect(system()).to.include('This is a private chat.');
  });

  it('trims the history and retries once when the context is too long, instead of replaying on every leg', async () => {
    t = await startTestBot([], { env: env() });
    for (let i = 0; i < 6; i++) await t.transport.push({ text: `message ${i} ${'x'.repeat(2000)}` });
    // (The long turns reached the token budget: their fold into the chat summary is done before the request counted.)
    await t.app.bot.idle();
    const before = primary.chats().length;
    primary.next(failures.contextTooLong);
    const [reply] = text(await t.transport.push({ text: 'short question' }));
    expect(reply).to.equal('primary: short question');
    const [tooLong, retried] = primary.chats().slice(before);
    expect(retried.json.messages.length).to.be.lessThan(tooLong.json.messages.length);
    expect(second.chats()).to.have.length(0);
  });

  it('splits an answer longer than WhatsApp\'s limit into several messages', async () => {
    primary.next({ status: 200, json: completion(`${'a'.repeat(3000)}\n\n${'b'.repeat(3000)}`) });
    t = await startTestBot([], { env: env() });
    const parts = text(await t.transport.push({ text: 'long please' }));
    expect(parts).to.have.length(2);
    expect(parts.join('\n\n')).to.equal(`${'a'.repeat(3000)}\n\n${'b'.repeat(3000)}`);
  });

  it('tells the model to admit it cannot check live information when no search is available', async () => {
    t = await startTestBot([], { env: env() });
    await t.transport.push({ text: 'what is the bitcoin price today?' });
    expect(primary.chats()[0].json.messages[0].content).to.match(/cannot check live information/);
  });

  it('stays honest about live information when a search key exists but no search tool is offered (plugin disabled)', async () => {
    t = await startTestBot([], { env: env({ SEARCH_API_KEY: 'tvly-key' }) });
    await t.transport.push({ text: 'what is the weather today?' });
    expect(primary.chats()[0].json.messages[0].content).to.match(/cannot check live information/);
  });

  it('answers a group message only when the bot is mentioned', async () => {
    t = await startTestBot([], { env: env(), config: { targetUserIds: ['62899999999'] } });
    const group = '1203630001@g.us';
    expect(await t.transport.push({ chatId: group, senderId: '62811@s.whatsapp.net', senderName: 'Budi', text: 'lunch at 12?' })).to.deep.equal([]);
    const replies = text(await t.transport.push({ chatId: group, senderId: '62812@s.whatsapp.net', senderName: 'Sari', text: '@62899999999 who asked about lunch?', mentions: ['62899999999@s.whatsapp.net'] }));
    expect(replies).to.deep.equal(['primary: Sari: who asked about lunch?']);
    const prompt = primary.chats()[0].json.messages.map((m: { content: string }) => m.content);
    expect(prompt).to.include('Budi: lunch at 12?');
  });

  it('answers different chats in parallel while keeping each chat in order', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    t = await startTestBot([], { env: env() });
    primary.http.routes['POST /v1/chat/completions'] = async (req) => {
      if (lastUserText(req) === 'slow one') await gate;
      return { status: 200, json: completion(`primary: ${lastUserText(req)}`) };
    };
    const order: string[] = [];
    const a1 = t.transport.push({ chatId: 'a@s.whatsapp.net', senderId: 'a@s.whatsapp.net', text: 'slow one' }).then(() => order.push('a1'));
    const a2 = t.transport.push({ chatId: 'a@s.whatsapp.net', senderId: 'a@s.whatsapp.net', text: 'after slow' }).then(() => order.push('a2'));
    await t.transport.push({ chatId: 'b@s.whatsapp.net', senderId: 'b@s.whatsapp.net', text: 'quick' }).then(() => order.push('b'));
    release();
    await Promise.all([a1, a2]);
    expect(order).to.deep.equal(['b', 'a1', 'a2']);
  });

  it('limits AI requests per user per minute with a plain sentence, exempts owners, and keeps counters across a restart', async () => {
    const config = { owners: ['62800000001'], ai: { requestsPerMinute: 2, tokensPerDay: 0, premiumTokensPerDay: 0, quotaMainTokens: 0, quotaPremiumTokens: 0, maxToolRounds: 3, showProvider: false } };
    t = await startTestBot([], { env: env(), config });
    await t.transport.push({ text: 'one' });
    await t.transport.push({ text: 'two' });
    t = await t.restart();
    const [limited] = text(await t.transport.push({ text: 'three' }));
    expect(limited).to.match(/try again in \d+ seconds/);
    expect(primary.chats()).to.have.length(2);
    for (const word of ['a', 'b', 'c']) expect(text(await t.transport.push({ text: word, senderId: '62800000001@s.whatsapp.net' }))[0]).to.equal(`primary: ${word}`);
  });

  it('records token usage per provider and model per day', async () => {
    t = await startTestBot([], { env: env() });
    // The date fixed: the day the answer is counted under is the day expected, even across midnight (UTC).
    const clock = t.useClock(['Date']);
    await t.transport.push({ text: 'count me' });
    const snapshot = await t.app.usage.snapshot();
    const today = new Date(clock.now()).toISOString().slice(0, 10);
    expect(snapshot.days[today]['primary|main-a']).to.deep.equal({ prompt: 10, completion: 5, total: 15, requests: 1 });
  });

  it('shows "typing" while the model works, and hides it afterwards', async () => {
    t = await startTestBot([], { env: env() });
    t.transport.recordTyping = true;
    const actions = await t.transport.push({ text: 'hi' });
    expect(actions.map((a) => a.type)).to.deep.equal(['typing', 'typing', 'text']);
    expect(actions.slice(0, 2).map((a) => (a as { on: boolean }).on)).to.deep.equal([true, false]);
  });

  it('never names the provider in a reply unless the owner turns on the debug option', async () => {
    t = await startTestBot([], { env: env() });
    expect(text(await t.transport.push({ text: 'x' }))[0]).to.equal('primary: x');
    t.app.bot.setConfig({ ...t.app.config, ai: { ...t.app.config.ai, showProvider: true } });
    expect(text(await t.transport.push({ text: 'y' }))[0]).to.equal('primary: y\n\n_(primary · main-a)_');
  });

  it('stops a user at the daily token budget with the time they can ask again, and warns at 80% of the account quota', async () => {
    const ai = { requestsPerMinute: 0, tokensPerDay: 20, premiumTokensPerDay: 0, quotaMainTokens: 30, quotaPremiumTokens: 0, maxToolRounds: 3, showProvider: false };
    t = await startTestBot([], { env: env(), config: { ai } });
    await t.transport.push({ text: 'first' }); // 15 tokens
    await t.transport.push({ text: 'second' }); // 30 tokens: over the user's budget and at 100% of the quota
    const [limited] = text(await t.transport.push({ text: 'third' }));
    expect(limited).to.match(/used today's AI budget.*about \d+ hour/);
    expect(primary.chats()).to.have.length(2);
    expect(t.logs().some((l) => /80% of its token quota/.test(l.msg))).to.equal(true);
  });

  // `has` (asked several times per message) answers from a cheap check; it must say what the status says.
  it('live capabilities: has() and lacks() agree with the status the owner sees, as the legs rest and are rejected', async () => {
    t = await startTestBot('bundled', { env: env() });
    const caps = t.app.capabilities;
    const states = () => Object.fromEntries(['chat', 'premium', 'audio'].map((name) => {
      expect(caps.has(name), name).to.equal(caps.status(name).ok);
      expect(caps.lacks([name]), name).to.equal(!caps.status(name).ok);
      return [name, caps.has(name)];
    }));
    expect(states()).to.deep.equal({ chat: true, premium: true, audio: false });
    // The primary (the premium leg) is rate-limited: chat goes on through the second, premium is gone for now.
    primary.next(failures.rateLimit(60));
    expect(text(await t.transport.push({ text: 'hello' }))).to.deep.equal(['second: hello']);
    expect(states()).to.deep.equal({ chat: true, premium: false, audio: false });
    // The second's key is rejected: nothing can answer, and the bot says so instead of asking again.
    second.next(failures.badKey);
    expect(text(await t.transport.push({ text: 'still there?' })).join(' ')).to.not.include('second:');
    expect(states()).to.deep.equal({ chat: false, premium: false, audio: false });
    expect(caps.lacks(['chat', 'audio'])).to.equal(true);
    expect(caps.lacks([])).to.equal(false);
  });
});
