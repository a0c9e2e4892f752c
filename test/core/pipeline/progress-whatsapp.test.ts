import { expect } from 'chai';
import { install as installFakeTimers, type Clock } from '@sinonjs/fake-timers';
import { rm } from 'node:fs/promises';
import type { App } from '../../../app/app.js';
import { definePlugin } from '../../../core/index.js';
import { PROGRESS_DONE, PROGRESS_EDIT_INTERVAL_MS } from '../../../core/kernel/pipeline/progress.js';
import type { WhatsAppTransport } from '../../../core/adapters/whatsapp/whatsapp-transport.js';
import pingPlugin from '../../../plugins/ping/index.js';
import searchPlugin from '../../../plugins/search/index.js';
import { BOT_PHONE, FakeSocketFactory, waText, type SentRecord } from '../../fakes/baileys-socket.js';
import type { FakeBehaviour, RecordedRequest } from '../../../app/testing/http-fake.js';
import { FakeGateway, completion, failures } from '../../fakes/openai-gateway.js';
import { FakeSearchProvider } from '../../fakes/search-provider.js';
import { startLinkedBot } from '../../helpers/linked-bot.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';

const ALICE = '6281211110000@s.whatsapp.net';
/** The answer as sent: the model's Markdown in WhatsApp formatting, with the searched pages as sources. */
const ANSWER = 'send There are *about 10^24* stars.\n\nSources:\n[1] example-rates.com/idr/usd\n[2] news.example.org/markets/rupiah';

type Content = { text?: string; edit?: { id?: string }; react?: { text: string } };
const contentOf = (s: SentRecord) => s.content as Content;
/** What a sent record shows: `send <text>`, `edit <text>` or `react <emoji>` (presence and receipts are not sends). */
function shown(s: SentRecord): string {
  const c = contentOf(s);
  if (c.react) return `react ${c.react.text}`;
  if (c.edit) return `edit ${c.text}`;
  return `send ${c.text}`;
}

/** A tool of a test plugin that runs until the test lets it finish (a long script, say), with a phrase of its own. */
function starsPlugin() {
  let started!: () => void;
  let finish!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const plugin = definePlugin({
    name: 'stars',
    description: 'counts stars (test)',
    setup: () => ({
      tools: [
        {
          name: 'count_stars',
          description: 'counts the stars',
          parameters: { type: 'object', properties: {} },
          effects: { outsideText: false, acts: 'nothing' },
          progress: 'counting the stars…',
          async run() {
            started();
            await finished;
            return 'about 10^24';
          },
        },
      ],
    }),
  });
  return { plugin, running, finish };
}

/** The main model: searches first, then counts stars, then answers in Markdown. */
function model(req: RecordedRequest): FakeBehaviour {
  const messages = (req.json?.messages ?? []) as Array<{ role: string; content: unknown; tool_call_id?: string }>;
  const tools = messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
  if (tools.includes('call-stars')) return { status: 200, json: completion('There are **about 10^24** stars.') };
  if (tools.includes('call-search')) return { status: 200, json: completion(null, { toolCalls: [{ id: 'call-stars', name: 'count_stars', arguments: '{}' }] }) };
  return { status: 200, json: completion(null, { toolCalls: [{ id: 'call-search', name: 'web_search', arguments: JSON.stringify({ query: 'how many stars' }) }] }) };
}

describe('progress on long turns over WhatsApp (fake Baileys socket, real app)', function () {
  this.timeout(60_000);
  let dir: string;
  let app: App | undefined;
  let transport: WhatsAppTransport;
  let sockets: FakeSocketFactory;
  let gateway: FakeGateway;
  let search: FakeSearchProvider;
  /** The faked clock of a test about the status's timing (Date and timers), given back before the bot stops. */
  let clock: Clock | undefined;

  beforeEach(async () => {
    dir = await tempDir('wabot-progress-');
    search = await FakeSearchProvider.start();
  });

  afterEach(async () => {
    clock?.uninstall();
    clock = undefined;
    await app?.stop();
    app = undefined;
    await gateway.close();
    await search.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function start(conversation: Record<string, unknown>, answer: (req: RecordedRequest) => FakeBehaviour, plugins: Parameters<typeof startLinkedBot>[0]['plugins'] = [pingPlugin]) {
    gateway = await FakeGateway.start('gw', answer);
    await writeConfig(dir, {
      targetUserIds: [BOT_PHONE],
      access: { mode: 'everyone', allow: [], block: [] },
      // Each message its own turn (no burst window to wait for); status edits as fast as the limits let them go.
      conversation: { debounceMs: 0, ...conversation },
      sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 },
    });
    ({ app, transport, sockets } = await startLinkedBot({ dir, env: { API_KEY: 'test-key-123456', BASE_URL: `${gateway.url}/v1`, MODEL: 'test-model', SEARCH_API_KEY: 'tvly-test-123', SEARCH_BASE_URL: search.url }, plugins }));
  }

  /** Resolves with the first thing sent that `check` accepts, waiting for each new send (no sleeps). */
  async function sentWhere(check: (s: SentRecord) => boolean): Promise<SentRecord> {
    for (;;) {
      const found = sockets.last.sent.find(check);
      if (found) return found;
      await sockets.last.waitForSent(sockets.last.sent.length + 1);
    }
  }

  /** Awaits `work`, moving the faked clock on 100 ms at a time while it waits for a timer (the answer's pacing). */
  async function drive<T>(work: Promise<T>): Promise<T> {
    let done = false;
    const finished = work.finally(() => (done = true));
    // Awaited below; until then a failure is not an unhandled rejection.
    finished.catch(() => undefined);
    for (let spins = 0; !done; spins++) {
      await new Promise((resolve) => setImmediate(resolve));
      if (!done && spins >= 2) await clock!.tickAsync(100);
    }
    return finished;
  }

  it('a turn longer than conversation.progressAfterSeconds shows one status, named from the running tool, edited as it goes, then the answer', async () => {
    const stars = starsPlugin();
    await start({ progressAfterSeconds: 1 }, model, [pingPlugin, searchPlugin, stars.plugin]);
    // The second before the status and the edits' interval pass on a faked clock, moved by the test.
    clock = installFakeTimers({ now: Date.now(), toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const held = search.holdNext();
    sockets.last.deliver([waText('how many stars are there?', { from: ALICE })]);
    await held.received;
    // The search takes long: the status says so, once the turn ran a second, not before.
    await clock.tickAsync(999);
    expect(sockets.last.sent.map(shown), 'a status before the turn ran a second').to.deep.equal([]);
    await clock.tickAsync(1);
    const status = await sentWhere((s) => shown(s) === 'send searching the web…');
    const statusAt = clock.now;
    expect(status.jid).to.equal(ALICE);
    held.release();
    // The next tool runs long too: the same message now says what runs now, an edit interval after the status.
    await stars.running;
    await clock.tickAsync(statusAt + PROGRESS_EDIT_INTERVAL_MS - 1 - clock.now);
    expect(sockets.last.sent.map(shown), 'an edit sooner than its interval').to.deep.equal(['send searching the web…']);
    await clock.tickAsync(1);
    const edit = await sentWhere((s) => shown(s) === 'edit counting the stars…');
    const editAt = clock.now;
    expect(contentOf(edit).edit?.id, 'the status message itself is edited').to.equal(status.id);
    stars.finish();
    await drive(sentWhere((s) => shown(s) === ANSWER));
    expect(clock.now - editAt, 'the answer waits for no edit interval').to.be.below(PROGRESS_EDIT_INTERVAL_MS);
    await drive(transport.idle().then(() => app!.bot.idle()));
    // Once answered, the status takes its last state (it never claims to be still working), an interval after the edit.
    const done = await sentWhere((s) => shown(s) === `edit ${PROGRESS_DONE}`);
    expect(clock.now - editAt, 'the last edit sooner than its interval').to.be.at.least(PROGRESS_EDIT_INTERVAL_MS);
    expect(contentOf(done).edit?.id).to.equal(status.id);
    expect(sockets.last.sent.map(shown)).to.deep.equal(['send searching the web…', 'edit counting the stars…', ANSWER, `edit ${PROGRESS_DONE}`]);
  });

  it('a turn that ends before conversation.progressAfterSeconds sends no status (nor any edit)', async () => {
    const stars = starsPlugin();
    stars.finish();
    await start({ progressAfterSeconds: 30 }, model, [pingPlugin, searchPlugin, stars.plugin]);
    sockets.last.deliver([waText('how many stars are there?', { from: ALICE })]);
    await transport.idle();
    await app!.bot.idle();
    expect(sockets.last.sent.map(shown)).to.deep.equal([ANSWER]);
  });

  it('with conversation.progressAfterSeconds 0 a long turn shows no status', async () => {
    const stars = starsPlugin();
    await start({ progressAfterSeconds: 0 }, model, [pingPlugin, searchPlugin, stars.plugin]);
    sockets.last.deliver([waText('how many stars are there?', { from: ALICE })]);
    await stars.running;
    // Held well past the WhatsApp default of 8 s would take a timing; instead: the tool ran, and nothing was sent.
    expect(sockets.last.sent.map(shown)).to.deep.equal([]);
    stars.finish();
    await transport.idle();
    await app!.bot.idle();
    expect(sockets.last.sent.map(shown)).to.deep.equal([ANSWER]);
  });

  it('conversation.ackReactions: 👀 on a message taken up, then ✅ once answered, or ❌ when the answer failed', async () => {
    await start({ ackReactions: true }, (req) => (JSON.stringify(req.json).includes('fail please') ? failures.badKey : { status: 200, json: completion('hello back') }));
    sockets.last.deliver([waText('hello', { from: ALICE, id: 'MSG-OK' })]);
    await transport.idle();
    await app!.bot.idle();
    expect(sockets.last.sent.map(shown)).to.deep.equal(['react 👀', 'send hello back', 'react ✅']);
    expect(sockets.last.sent.filter((s) => contentOf(s).react).map((s) => (s.content as { react: { key: { id: string } } }).react.key.id)).to.deep.equal(['MSG-OK', 'MSG-OK']);
    sockets.last.sent.length = 0;
    sockets.last.deliver([waText('fail please', { from: ALICE, id: 'MSG-BAD' })]);
    await transport.idle();
    await app!.bot.idle();
    const after = sockets.last.sent.map(shown);
    expect(after[0]).to.equal('react 👀');
    expect(after.at(-1)).to.equal('react ❌');
  });

  it('sends no acknowledgement reactions by default', async () => {
    await start({}, () => ({ status: 200, json: completion('hello back') }));
    sockets.last.deliver([waText('hello', { from: ALICE })]);
    await transport.idle();
    await app!.bot.idle();
    expect(sockets.last.sent.map(shown)).to.deep.equal(['send hello back']);
  });
});
