import { MemoryFullError } from '../../../core/api/errors.js';
import { expect } from 'chai';
import searchPlugin from '../../../plugins/search/index.js';
import { MemoryStore } from '../../../core/services/store/memory.js';
import type { FakeBehaviour, RecordedRequest } from '../../../app/testing/http-fake.js';
import { completion, FakeGateway } from '../../fakes/openai-gateway.js';
import { FakeSearchProvider } from '../../fakes/search-provider.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir } from '../../helpers/checkout.js';

const BOT = '62899999999';
const GROUP = '120363000000000088@g.us';
const OWNER = '62811100000';
const MEMBER = '62855500011@s.whatsapp.net';

type Msg = { role: string; content: string | null; tool_call_id?: string; tool_calls?: Array<{ id: string }> };
const messagesOf = (req: RecordedRequest) => req.json.messages as Msg[];
const toolsOffered = (req: RecordedRequest) => ((req.json.tools ?? []) as unknown[]).length;

/** A greedy model: while it is offered tools it asks for `count` calls of `name` in every round; then it answers. */
function greedyModel(name: string, count: number, args: (i: number) => Record<string, unknown>) {
  let round = 0;
  return (req: RecordedRequest): FakeBehaviour => {
    if (!toolsOffered(req)) return { status: 200, json: completion('answered without tools') };
    round++;
    const toolCalls = Array.from({ length: count }, (_, i) => ({ id: `r${round}-c${i}`, name, arguments: JSON.stringify(args(i)) }));
    return { status: 200, json: completion(null, { toolCalls }) };
  };
}

/** Every tool call of every round got exactly one result (the API refuses a request otherwise). */
function expectEveryCallAnswered(req: RecordedRequest): void {
  const messages = messagesOf(req);
  const ids = messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id));
  const answered = messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
  expect(answered).to.deep.equal(ids);
}

describe('tool calls are bounded per round and per message', function () {
  this.timeout(60_000);
  let gw: FakeGateway;
  let search: FakeSearchProvider;
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await Promise.all([gw.close(), search.close()]);
  });

  async function start(model: (req: RecordedRequest) => FakeBehaviour, ai: Record<string, unknown> = {}, plugins = [searchPlugin]) {
    gw = await FakeGateway.start('gw', model);
    search = await FakeSearchProvider.start();
    t = await startTestBot(plugins, {
      env: { BASE_URL: gw.url, SEARCH_API_KEY: 'tvly-key-123456', SEARCH_BASE_URL: search.url },
      config: { targetUserIds: [BOT], owners: [OWNER], ai: { requestsPerMinute: 10, tokensPerDay: 300000, ...ai } },
    });
    return t;
  }
  const texts = (actions: Array<{ type: string }>) => actions.filter((a) => a.type === 'text').map((a) => (a as unknown as { text: string }).text);

  it('a round asking for 60 web searches runs 8, refuses the rest in their results, and the message stops at 20 searches', async () => {
    await start(greedyModel('web_search', 60, (i) => ({ query: `paid search ${i}` })));
    const replies = texts(await t!.transport.push({ senderId: MEMBER, text: 'search everything about rupiah' }));
    expect(replies).to.have.length(1);
    expect(replies[0]).to.match(/^answered without tools\n\nSources:/);
    // 8 + 8 + 4: the search provider (paid per call) receives 20 requests, not 300.
    expect(search.searches()).to.have.length(20);
    const requests = gw.chats();
    expect(requests.map(toolsOffered).map((n) => n > 0)).to.deep.equal([true, true, true, false]);
    const firstResults = messagesOf(requests[1]!).filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(firstResults).to.have.length(60);
    expect(firstResults.filter((r) => r.startsWith('Refused: not run, at most 8 per round tool calls run'))).to.have.length(52);
    const lastResults = messagesOf(requests[3]!).filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(lastResults.filter((r) => r.startsWith('Refused: not run, at most 20 per message'))).to.have.length(56);
    for (const req of requests.slice(1)) expectEveryCallAnswered(req);
    expect(t!.logs().some((l) => /tool call\(s\) refused: over the cap/.test(String(l.msg)))).to.equal(true);
  });

  it('the caps are options: ai.maxToolCallsPerRound 3 and ai.maxToolCallsPerMessage 5 let 5 searches through', async () => {
    await start(greedyModel('web_search', 60, (i) => ({ query: `paid search ${i}` })), { maxToolCallsPerRound: 3, maxToolCallsPerMessage: 5 });
    expect(texts(await t!.transport.push({ senderId: MEMBER, text: 'search' }))[0]).to.match(/^answered without tools/);
    expect(search.searches()).to.have.length(5);
  });

  it('ai.toolCallsPerDay counts every call of a person over the day: 12 run, the rest are refused in their results, also in the next message; an owner is not held to it', async () => {
    await start(greedyModel('web_search', 10, (i) => ({ query: `paid search ${i}` })), { toolCallsPerDay: 12 });
    expect(texts(await t!.transport.push({ senderId: MEMBER, text: 'search once' }))[0]).to.match(/^answered without tools/);
    expect(search.searches()).to.have.length(12);
    const before = gw.chats().length;
    expect(texts(await t!.transport.push({ senderId: MEMBER, text: 'search again' }))[0]).to.match(/^answered without tools/);
    expect(search.searches()).to.have.length(12);
    const results = gw.chats().slice(before).flatMap((req) => messagesOf(req).filter((m) => m.role === 'tool').map((m) => String(m.content)));
    expect(results.length).to.be.greaterThan(0);
    expect(results.every((r) => r.startsWith("Refused: not run, today's budget of 12 tool calls for this person is used"))).to.equal(true);
    for (const req of gw.chats().slice(before + 1)) expectEveryCallAnswered(req);
    expect(await t!.app.budgets.toolCallsToday(MEMBER)).to.equal(12);
    await t!.transport.push({ senderId: `${OWNER}@s.whatsapp.net`, text: 'owner searches' });
    expect(search.searches()).to.have.length(12 + 20);
  });

  it("a group member's 110 remember calls store 5 facts, and every fact stored before is kept (the oldest in the archive)", async () => {
    await start(greedyModel('remember', 110, (i) => ({ fact: `planted fact ${i}` })));
    const memories = t!.app.bot.memories;
    for (let i = 0; i < 100; i++) await memories.remember(GROUP, `owner fact ${i}`, `${OWNER}@s.whatsapp.net`);
    const replies = texts(await t!.transport.push({ chatId: GROUP, senderId: MEMBER, text: `@${BOT} remember all of this`, mentions: [`${BOT}@s.whatsapp.net`] }));
    expect(replies).to.deep.equal(['answered without tools']);
    const facts = (await memories.facts(GROUP)).map((f) => f.text);
    const archived = (await memories.archived(GROUP)).map((f) => f.text);
    expect(facts.filter((f) => f.startsWith('planted'))).to.deep.equal(['planted fact 0', 'planted fact 1', 'planted fact 2', 'planted fact 3', 'planted fact 4']);
    expect(facts).to.have.length(100);
    // Nothing the owner stored is gone: the five oldest moved to the archive.
    expect(archived).to.deep.equal(['owner fact 0', 'owner fact 1', 'owner fact 2', 'owner fact 3', 'owner fact 4']);
    const kept = new Set([...facts, ...archived]);
    for (let i = 0; i < 100; i++) expect(kept.has(`owner fact ${i}`), `owner fact ${i}`).to.equal(true);
    const results = messagesOf(gw.chats()[1]!).filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(results.filter((r) => r === 'Remembered.')).to.have.length(5);
    expect(results.filter((r) => r === 'Not remembered: at most 5 facts are stored per message.')).to.have.length(3);
  });
});

describe('memory archive', () => {
  it('moves the oldest facts to the archive, refuses new ones when both are full, and a privacy delete reaches the archive', async () => {
    const dir = await tempDir('memory-archive-');
    const store = new MemoryStore(dir, 3, 2);
    for (const text of ['a1', 'a2', 'a3', 'a4', 'a5']) await store.remember('chat', text, 'ana');
    expect((await store.facts('chat')).map((f) => f.text)).to.deep.equal(['a3', 'a4', 'a5']);
    expect((await store.archived('chat')).map((f) => f.text)).to.deep.equal(['a1', 'a2']);
    const full = await store.remember('chat', 'b1', 'budi').catch((err: unknown) => err);
    expect(full).to.be.instanceOf(MemoryFullError);
    expect((await store.facts('chat')).map((f) => f.text)).to.deep.equal(['a3', 'a4', 'a5']);
    // Reopened from disk: the archive is in the file.
    const again = new MemoryStore(dir, 3, 2);
    expect((await again.archived('chat')).map((f) => f.text)).to.deep.equal(['a1', 'a2']);
    expect(await again.removeWhere('chat', (f) => f.text === 'a1' || f.text === 'a4')).to.equal(2);
    expect((await again.archived('chat')).map((f) => f.text)).to.deep.equal(['a2']);
    expect((await again.forget('chat', 'all')).map((f) => f.text)).to.deep.equal(['a2', 'a3', 'a5']);
    expect(await again.archived('chat')).to.deep.equal([]);
  });
});
