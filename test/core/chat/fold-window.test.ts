import { expect } from 'chai';
import type { FakeBehaviour, RecordedRequest } from '../../../app/testing/http-fake.js';
import { completion, FakeGateway } from '../../fakes/openai-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const ANA = '10000000001@s.whatsapp.net';
type Msg = { role: string; content: string };
const messagesOf = (req: RecordedRequest) => (req.json?.messages ?? []) as Msg[];
const isFold = (req: RecordedRequest) => /running summary of a WhatsApp conversation/.test(messagesOf(req)[0]?.content ?? '');

/**
 * Cache-friendly to the end (issue 53): while the chat's summary fold is being made, the prompt's window does not
 * slide — each request repeats the one before it and only grows at its end — and once the fold lands the summary
 * takes the folded turns' place.
 */
describe('the window holds still while a summary fold is pending (issue 53)', function () {
  this.timeout(30_000);
  let gw: FakeGateway;
  let t: TestBot | undefined;
  let release: () => void = () => undefined;
  afterEach(async () => {
    release();
    await t?.stop();
    t = undefined;
    await gw.close();
  });

  it('requests made during the fold share their start with the one before; the fold then replaces the old turns', async () => {
    let foldAsked!: () => void;
    const asked = new Promise<void>((resolve) => (foldAsked = resolve));
    const hold = new Promise<void>((resolve) => (release = resolve));
    gw = await FakeGateway.start('gw', () => async (req: RecordedRequest): Promise<FakeBehaviour> => {
      if (!isFold(req)) return { status: 200, json: completion('noted') };
      foldAsked();
      await hold;
      return { status: 200, json: completion('Ana told about her trip, day by day.') };
    });
    t = await startTestBot('bundled', { env: { API_KEY: 'k', BASE_URL: gw.url, MODEL: 'm' }, config: { history: { maxMessages: 50, maxPromptTokens: 500 }, ai: { requestsPerMinute: 0, tokensPerDay: 0 } } });
    // About 100 tokens a turn: the fifth passes the 500-token budget and starts the fold (held).
    const say = (i: number) => t!.transport.push({ chatId: ANA, senderId: ANA, text: `Day ${i} of my trip: ${'we walked along the coast and ate fish. '.repeat(9)}` });
    for (let i = 1; i <= 5; i++) await say(i);
    await asked;
    for (let i = 6; i <= 8; i++) await say(i);
    const chats = gw.chats().filter((r) => !isFold(r));
    const duringFold = chats.slice(4).map((r) => JSON.stringify(messagesOf(r).slice(0, -1)));
    // Each request made while the fold was pending starts with the whole of the one before (but its new turn).
    for (let i = 1; i < duringFold.length; i++) expect(duringFold[i].startsWith(duringFold[i - 1].slice(0, -1)), `request ${i + 5} repeats request ${i + 4}`).to.equal(true);
    expect(messagesOf(chats[7])[1].content).to.equal(messagesOf(chats[4])[1].content);
    release();
    await t.app.bot.idle();
    await say(9);
    const after = messagesOf(gw.chats().filter((r) => !isFold(r)).at(-1)!);
    expect(after.map((m) => m.content).join('\n')).to.contain('Ana told about her trip').and.not.contain('Day 1 of my trip');
  });
});
