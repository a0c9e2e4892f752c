import { expect } from 'chai';
import { completion, FakeGateway, lastUserText } from '../../fakes/openai-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tokenCount } from '../../../core/services/providers/usage.js';

const OWNER = '62811111111@s.whatsapp.net';

/**
 * A prompt built for the providers' prompt caches (issue 39): consecutive requests of a chat are the same bytes up to
 * the new turn, and the cached input the provider reports is counted where owners look.
 */
describe('prompt caching: a byte-stable prefix, and cached input tokens counted', function () {
  this.timeout(30_000);
  let gw: FakeGateway;
  let t: TestBot;
  afterEach(async () => {
    await t?.stop();
    await gw.close();
  });

  it('two consecutive requests of a chat share every byte but the new turn (system prompt, tools, earlier turns)', async () => {
    gw = await FakeGateway.start('gw');
    t = await startTestBot('bundled', { env: { API_KEY: 'k', BASE_URL: gw.url, MODEL: 'm' }, config: { owners: ['62811111111'] } });
    await t.transport.push({ senderId: OWNER, text: 'first question' });
    await t.transport.push({ senderId: OWNER, text: 'second question' });
    await t.transport.push({ senderId: OWNER, text: 'third question' });
    const [, a, b] = gw.chats().map((r) => r.body.toString());
    // The first request's bytes up to its messages' end, then only the answer to it and the new question.
    const open = a.slice(0, -2);
    expect(a.slice(-2)).to.equal(']}');
    expect(b.startsWith(`${open},`)).to.equal(true, 'the second request does not start with the first one');
    expect(JSON.parse(`[${b.slice(open.length + 1, -2)}]`)).to.deep.equal([
      { role: 'assistant', content: 'gw: second question' },
      { role: 'user', content: 'third question' },
    ]);
    // The tools are offered before the conversation (the part that changes comes last).
    expect(a.indexOf('"tools"')).to.be.greaterThan(0).and.lessThan(a.indexOf('"messages"'));
  });

  it('cached input reported by the gateway shows in .status (the last reply), the usage file and /metrics', async () => {
    gw = await FakeGateway.start('gw', (req) => {
      const answer = completion(`gw: ${lastUserText(req)}`, { usage: { prompt_tokens: 1200, completion_tokens: 30 } });
      return { status: 200, json: { ...answer, usage: { ...answer.usage, prompt_tokens_details: { cached_tokens: 1024 } } } };
    });
    t = await startTestBot('bundled', { env: { API_KEY: 'k', BASE_URL: gw.url, MODEL: 'm' }, config: { owners: ['62811111111'] } });
    // The date fixed: the answer is counted under the one day read below, even across midnight (UTC).
    t.useClock(['Date']);
    await t.transport.push({ senderId: OWNER, text: 'hello' });
    const status = (await t.transport.push({ senderId: OWNER, text: '.status' })).map((a) => (a as { text?: string }).text).join('\n');
    expect(status).to.match(/Last reply\*: 1230 tokens \(input 1200, of which 1024 cached; output 30\) in 1 request/);
    expect(status).to.match(/input 1200 of which 1024 cached/);
    const snapshot = await t.app.usage.snapshot();
    const counters = Object.values(Object.values(snapshot.days)[0]);
    expect(counters.map((c) => (c as { cached?: number }).cached)).to.deep.equal([1024]);
    const metrics = await t.app.metrics.registry.metrics();
    expect(metrics).to.match(/wa_bot_tokens_total\{leg="[^"]+",kind="cached"\} 1024/);
    expect(metrics).to.match(/wa_bot_tokens_total\{leg="[^"]+",kind="prompt"\} 1200/);
  });

  it('ai.cacheControl marks the last stable message with cache_control, the same bytes every request; off by default', async () => {
    gw = await FakeGateway.start('gw');
    t = await startTestBot('bundled', { env: { API_KEY: 'k', BASE_URL: gw.url, MODEL: 'm' }, config: { owners: ['62811111111'] } });
    await t.transport.push({ senderId: OWNER, text: 'unmarked' });
    expect(typeof gw.chats()[0].json!.messages[0].content).to.equal('string');
    t.app.bot.setConfig({ ...t.app.config, ai: { ...t.app.config.ai, cacheControl: true } });
    await t.transport.push({ senderId: OWNER, text: 'first' });
    await t.transport.push({ senderId: OWNER, text: 'second' });
    const [a, b] = gw.chats().slice(1);
    const system = a.json!.messages[0] as { role: string; content: Array<{ type: string; text: string; cache_control?: unknown }> };
    expect(system.role).to.equal('system');
    expect(system.content).to.have.length(1);
    expect(system.content[0].text).to.match(/^You are /);
    expect(system.content[0].cache_control).to.deep.equal({ type: 'ephemeral' });
    // Only the stable start is marked, and it is the same bytes in the next request.
    expect(a.body.toString().match(/cache_control/g)).to.have.length(1);
    expect(b.body.toString().startsWith(a.body.toString().slice(0, -2))).to.equal(true);
  });

  it('reads Anthropic-style usage: cache reads and writes are input, cache reads its cached part', () => {
    expect(tokenCount({ input_tokens: 50, cache_read_input_tokens: 2000, cache_creation_input_tokens: 100, output_tokens: 20 })).to.deep.equal({ prompt: 2150, cached: 2000, completion: 20 });
    expect(tokenCount({ prompt_tokens: 1200, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 1024 } })).to.deep.equal({ prompt: 1200, cached: 1024, completion: 30 });
    expect(tokenCount({ prompt_tokens: 10, completion_tokens: 5 })).to.deep.equal({ prompt: 10, cached: 0, completion: 5 });
  });
});
