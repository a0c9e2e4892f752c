import { expect } from 'chai';
import { storeDatabaseText, storedSummary } from '../../helpers/disk-text.js';
import path from 'node:path';
import type { FakeBehaviour, RecordedRequest } from '../../../app/testing/http-fake.js';
import { completion, failures, FakeGateway, lastUserText } from '../../fakes/openai-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const ANA = '10000000001@s.whatsapp.net';
const BUDI = '10000000002@s.whatsapp.net';
const GROUP = '120363000000000041@g.us';
/** A long chat is many requests a minute: no per-user rate limit here. */
const NO_LIMITS = { requestsPerMinute: 0, tokensPerDay: 0 };

type Msg = { role: string; content: string };
const messagesOf = (req: RecordedRequest) => (req.json?.messages ?? []) as Msg[];
/** A request that asks the model to fold turns into the summary (not a chat answer). */
const isFold = (req: RecordedRequest) => /running summary of a WhatsApp conversation/.test(messagesOf(req)[0]?.content ?? '');

/**
 * A gateway whose model, asked to fold turns, keeps the summary so far and every new line that gives a fact (one
 * with a digit), as a model keeps what matters; otherwise answers "gw: answered <n> characters". `foldFails`: fold requests fail.
 */
type GatewayState = { foldFails: boolean; hold?: Promise<void>; foldAsked?: () => void };
async function summarizingGateway(state: GatewayState): Promise<FakeGateway> {
  return FakeGateway.start('gw', () => async (req: RecordedRequest): Promise<FakeBehaviour> => {
    // (An answer that does not repeat the question: what stays of a message on disk is the message's own line.)
    if (!isFold(req)) return { status: 200, json: completion(`gw: answered ${lastUserText(req).length} characters`) };
    state.foldAsked?.();
    await state.hold;
    // A server error that asks for no wait: the chat itself keeps being answered by the same (only) leg.
    if (state.foldFails) return { ...failures.serverError, headers: { 'retry-after': '0' } };
    const asked = lastUserText(req);
    // The request frames the summary so far and the new messages as two content blocks, in that order.
    const [before = '', news = ''] = [...asked.matchAll(/<<<CONTENT\n([\s\S]*?)\nCONTENT>>>/g)].map((m) => m[1]);
    const facts = news.split('\n').filter((l) => l.startsWith('[') && !l.startsWith('[assistant]') && /\d{3}/.test(l));
    const kept = [...(before === '(none yet)' ? [] : [before]), ...facts].join('\n') || 'small talk only';
    return { status: 200, json: completion(kept) };
  });
}

/** The store database of the test bot's data folder (store.db and its WAL) as text: where the history and summaries are. */
async function historyFiles(dir: string): Promise<string> {
  return storeDatabaseText(path.join(dir, 'data'));
}

/**
 * One long chat, run once in before() (150 turns of Ana's, then a question about turn 1): both tests read what the
 * gateway was asked, neither changes the chat.
 */
describe('chat summary: a chat of 150 turns (issue 39)', function () {
  this.timeout(90_000);
  let gw: FakeGateway;
  /** The chat requests (not folds) after the 150 turns, and after the question that followed them. */
  let after150: RecordedRequest[];
  let afterQuestion: RecordedRequest[];
  let folds: number;

  before(async () => {
    gw = await summarizingGateway({ foldFails: false });
    const t = await startTestBot('bundled', { env: { API_KEY: 'k', BASE_URL: gw.url, MODEL: 'm' }, config: { history: { maxMessages: 50, maxPromptTokens: 6000 }, ai: NO_LIMITS } });
    try {
      await t.transport.push({ id: 'turn-1', chatId: ANA, senderId: ANA, text: 'my locker code is 4711' });
      for (let i = 2; i <= 150; i++) await t.transport.push({ chatId: ANA, senderId: ANA, text: `small talk number ${'x'.repeat(i % 7)} about the weather` });
      await t.app.bot.idle();
      after150 = gw.chats().filter((r) => !isFold(r));
      await t.transport.push({ chatId: ANA, senderId: ANA, text: 'what is my locker code?' });
      afterQuestion = gw.chats().filter((r) => !isFold(r));
      folds = gw.chats().filter(isFold).length;
    } finally {
      await t.stop();
    }
  });
  after(() => gw?.close());

  it('after 150 turns the fact of turn 1 still reaches the prompt, through the summary; no request grows without bound', () => {
    const last = messagesOf(afterQuestion.at(-1)!);
    // System prompt, then the summary, then the turns since: turn 1 itself left the window long ago.
    // The summary is content in a user-role block (what people said), never a system message.
    expect(last[1].role).to.equal('user');
    expect(last[1].content).to.match(/^\[Content: summary of the earlier conversation/).and.include('my locker code is 4711');
    expect(last.slice(2).some((m) => m.content.includes('4711'))).to.equal(false);
    expect(last.length).to.be.at.most(2 + 50);
    // Folds came in large chunks, not one per message.
    expect(folds).to.be.within(4, 12);
    // Bounded: the last 50 requests are no larger than the largest of the 50 before them (give or take one answer).
    const sizes = afterQuestion.map((r) => r.body.length);
    expect(Math.max(...sizes.slice(-50))).to.be.at.most(Math.max(...sizes.slice(-100, -50)) * 1.1);
  });

  it('over the last 50 of 150 turns consecutive requests share at least 85 % of their bytes as a prefix', () => {
    const requests = after150.slice(-51);
    let shared = 0;
    for (let i = 1; i < requests.length; i++) {
      const [a, b] = [requests[i - 1].body, requests[i].body];
      let n = 0;
      while (n < a.length && a[n] === b[n]) n++;
      shared += n / b.length;
    }
    expect(shared / (requests.length - 1)).to.be.at.least(0.85);
  });
});

describe('chat summary: older turns are folded by the model instead of dropped (issue 39)', function () {
  this.timeout(60_000);
  let gw: FakeGateway;
  let t: TestBot;
  const state: GatewayState = { foldFails: false };
  beforeEach(async () => {
    Object.assign(state, { foldFails: false, hold: undefined, foldAsked: undefined });
    gw = await summarizingGateway(state);
  });
  afterEach(async () => {
    await t?.stop();
    await gw.close();
  });
  const start = (history: Record<string, unknown> = {}, config: Record<string, unknown> = {}) =>
    startTestBot('bundled', { env: { API_KEY: 'k', BASE_URL: gw.url, MODEL: 'm' }, config: { history: { maxMessages: 50, maxPromptTokens: 6000, ...history }, ai: NO_LIMITS, ...config } });
  /** Ana's private chat: turn 1 tells a fact, then `n - 1` turns of small talk. */
  async function chat(n: number, chatId = ANA, senderId = ANA, firstId = 'turn-1'): Promise<void> {
    await t.transport.push({ id: firstId, chatId, senderId, text: 'my locker code is 4711' });
    for (let i = 2; i <= n; i++) await t.transport.push({ chatId, senderId, text: `small talk number ${'x'.repeat(i % 7)} about the weather` });
    await t.app.bot.idle();
  }
  const chatRequests = () => gw.chats().filter((r) => !isFold(r));
  /**
   * Ana tells a fact (turn 1) and makes small talk until the model is asked to fold her turns; the fold's answer is
   * held until the returned `release` is called.
   */
  async function foldHeld(): Promise<() => void> {
    let release!: () => void;
    state.hold = new Promise<void>((resolve) => (release = resolve));
    const asked = new Promise<void>((resolve) => (state.foldAsked = resolve));
    await t.transport.push({ id: 'turn-1', chatId: ANA, senderId: ANA, text: 'my locker code is 4711' });
    for (let i = 2; i <= 5; i++) await t.transport.push({ chatId: ANA, senderId: ANA, text: `small talk ${i}` });
    await asked;
    return release;
  }

  it('with history.summarize off the window slides as before: turn 1 is gone from the prompt', async () => {
    t = await start({ summarize: false });
    await chat(60);
    await t.transport.push({ chatId: ANA, senderId: ANA, text: 'what is my locker code?' });
    expect(gw.chats().filter(isFold)).to.have.length(0);
    expect(chatRequests().at(-1)!.body.toString()).to.not.include('4711');
  });

  it('a failing summary request loses nothing: the turns stay, the failure is logged, and a later fold carries turn 1', async () => {
    t = await start({ maxMessages: 10 });
    state.foldFails = true;
    await chat(18);
    const kept = await t.app.bot.histories.recent(ANA, 1000);
    expect(kept).to.have.length(36);
    expect(kept[0].text).to.equal('my locker code is 4711');
    expect(await t.app.bot.histories.summary(ANA)).to.equal(undefined);
    expect(t.logs().some((l) => l.level >= 50 && /could not fold older turns/.test(l.msg))).to.equal(true);
    // The prompt stays bounded by maxMessages meanwhile.
    expect(messagesOf(chatRequests().at(-1)!).length).to.be.at.most(1 + 10);

    state.foldFails = false;
    await t.transport.push({ chatId: ANA, senderId: ANA, text: 'still there?' });
    await t.app.bot.idle();
    await t.transport.push({ chatId: ANA, senderId: ANA, text: 'what is my locker code?' });
    expect(messagesOf(chatRequests().at(-1)!)[1].content).to.include('my locker code is 4711');
  });

  it('a fold made while the chat changed is dropped: a message deleted meanwhile never enters the summary', async () => {
    t = await start({ maxMessages: 10 });
    // The fold's answer is held until the delete for everyone is through.
    const release = await foldHeld();
    await t.transport.revoke(ANA, 'turn-1');
    release();
    await t.app.bot.idle();
    expect(await t.app.bot.histories.summary(ANA)).to.equal(undefined);
    await t.app.bot.histories.flush();
    expect(await historyFiles(t.dir)).to.not.include('4711');
    // The turns are still there, and the next fold is made from what is left.
    state.hold = undefined;
    await t.transport.push({ chatId: ANA, senderId: ANA, text: 'small talk 6 with 123 apples' });
    for (let i = 7; i <= 10; i++) await t.transport.push({ chatId: ANA, senderId: ANA, text: `small talk ${i}` });
    await t.app.bot.idle();
    expect((await t.app.bot.histories.summary(ANA))?.text).to.include('123 apples').and.not.include('4711');
  });

  it('a summary still being made when the bot stops writes nothing after the stop (the turns stay, folded after the next start)', async () => {
    t = await start({ maxMessages: 10 });
    const release = await foldHeld();
    const stopped = t;
    t = await stopped.restart({}, async () => {
      const atStop = await historyFiles(stopped.dir);
      release();
      // The fold's answer arrives after the stop: it is dropped once its request settles.
      await stopped.app.bot.ai.idle?.();
      expect(await historyFiles(stopped.dir)).to.equal(atStop);
      expect(storedSummary(path.join(stopped.dir, 'data'), ANA)).to.equal(undefined);
      state.hold = undefined;
    });
    await t.transport.push({ chatId: ANA, senderId: ANA, text: 'small talk 6' });
    await t.app.bot.idle();
    expect((await t.app.bot.histories.summary(ANA))?.text).to.include('4711');
  });

  it('a message of the summary deleted for everyone removes the summary, from the next prompt and from disk', async () => {
    t = await start({ maxMessages: 10 });
    await chat(12);
    expect((await t.app.bot.histories.summary(ANA))?.text).to.include('4711');
    await t.transport.revoke(ANA, 'turn-1');
    await t.app.bot.histories.flush();
    expect(await historyFiles(t.dir)).to.not.include('4711');
    await t.transport.push({ chatId: ANA, senderId: ANA, text: 'what is my locker code?' });
    expect(chatRequests().at(-1)!.body.toString()).to.not.include('4711').and.not.include('summary of the earlier');
  });

  it('.reset and .forget clear the summary too', async () => {
    // Without the recall log: it keeps every message by design (".reset clears the prompt history only: the log
    // stays", plugins/recall/README.md) and writes a second after the message, so the words would be in the database
    // or not by timing alone. What .reset and .forget clear is the history and the summary, checked byte for byte.
    t = await start({ maxMessages: 10 }, { plugins: { recall: { enabled: false } } });
    await chat(12);
    expect(await t.app.bot.histories.summary(ANA)).to.not.equal(undefined);
    await t.transport.push({ chatId: ANA, senderId: ANA, text: '.reset' });
    expect(await t.app.bot.histories.summary(ANA)).to.equal(undefined);
    await chat(12, ANA, ANA, 'again-1');
    await t.app.bot.memories.remember(ANA, 'ana likes tea', ANA);
    const replies = await t.transport.push({ chatId: ANA, senderId: ANA, text: '.forget all' });
    expect(replies.map((r) => (r as { text?: string }).text).join(' ')).to.include('summary of our older conversation is cleared');
    expect(await t.app.bot.histories.summary(ANA)).to.equal(undefined);
    await t.app.bot.histories.flush();
    expect(await historyFiles(t.dir)).to.not.include('4711');
  });

  it('a summary still being made when .reset arrives is dropped: nothing of the cleared turns comes back, in the prompt or on disk', async () => {
    // (Without the recall log, which keeps every message by design: see the test above.)
    t = await start({ maxMessages: 10 }, { plugins: { recall: { enabled: false } } });
    const release = await foldHeld();
    await t.transport.push({ chatId: ANA, senderId: ANA, text: '.reset' });
    release();
    await t.app.bot.idle();
    expect(await t.app.bot.histories.summary(ANA)).to.equal(undefined);
    expect(await t.app.bot.histories.recent(ANA)).to.deep.equal([]);
    await t.app.bot.histories.flush();
    expect(await historyFiles(t.dir)).to.not.include('4711');
  });

  it(".mydata exports the summary and delete removes it; in a group only a summary that holds the person's words goes", async () => {
    t = await start({ maxMessages: 10 });
    t.app.bot.setConfig({ ...t.app.config, groups: { ...t.app.config.groups, policy: 'open' }, targetUserIds: ['62899999999'] });
    await chat(12);
    // A group where only Budi talks to the bot: its summary holds nothing of Ana.
    for (let i = 1; i <= 8; i++) await t.transport.push({ chatId: GROUP, senderId: BUDI, senderName: 'Budi', text: `@62899999999 budi says 90${i}0 things`, mentions: ['62899999999@s.whatsapp.net'] });
    await t.app.bot.idle();
    expect((await t.app.bot.histories.summary(GROUP))?.text).to.include('budi says');

    const exported = await t.app.bot.privacy.exportFor([ANA]);
    expect(JSON.stringify(exported['conversation summaries'])).to.include('4711').and.not.include('budi says');
    await t.app.bot.privacy.deleteFor([ANA]);
    expect(await t.app.bot.histories.summary(ANA)).to.equal(undefined);
    expect(await t.app.bot.histories.summary(GROUP)).to.not.equal(undefined);
    await t.app.bot.privacy.deleteFor([BUDI]);
    expect(await t.app.bot.histories.summary(GROUP)).to.equal(undefined);
    await t.app.bot.histories.flush();
    expect(await historyFiles(t.dir)).to.not.include('4711').and.not.include('budi says');
  });

  it('the summary survives a restart (validated in the history file)', async () => {
    t = await start({ maxMessages: 10 });
    await chat(12);
    t = await t.restart({ config: { ai: NO_LIMITS } });
    expect((await t.app.bot.histories.summary(ANA))?.text).to.include('4711');
  });
});

describe('chat summary: a private chat moving from its LID to its phone id keeps both summaries', () => {
  it('the summaries kept under both ids are merged, oldest first, covering everyone either covered', async () => {
    const { HistoryStore } = await import('../../../core/services/store/history.js');
    const { tempDir } = await import('../../helpers/checkout.js');
    const store = new HistoryStore(await tempDir(), 200);
    const LID = '98765432100001@lid';
    const fold = async (chat: string, senderId: string, text: string, at: number) => {
      for (let i = 0; i < 3; i++) await store.append(chat, { id: `${chat}-${i}`, role: 'user', senderId, text: `${text} ${i}`, at: i });
      expect(await store.fold(chat, (await store.recent(chat)).slice(0, 2), undefined, text, at)).to.equal(true);
    };
    await fold(LID, LID, 'under the lid', 1);
    await fold(ANA, ANA, 'under the phone', 2);
    await store.moveChat(LID, ANA);
    const summary = (await store.summary(ANA))!;
    expect(summary.text).to.equal('under the lid\nunder the phone');
    expect(summary.people).to.have.members([LID, ANA]);
    expect(summary.recent.map((m) => m.id)).to.deep.equal([`${LID}-0`, `${LID}-1`, `${ANA}-0`, `${ANA}-1`]);
    expect(await store.summary(LID)).to.equal(undefined);
    expect((await store.recent(ANA)).map((e) => e.text)).to.have.members(['under the lid 2', 'under the phone 2']);
  });
});
