import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createApp } from '../../../app/app.js';
import { definePlugin, PromptRefused, type PluginHost } from '../../../core/index.js';
import { FakeModel, lastText, startTestBot, type TestBot } from '../../../app/testing/index.js';
import { startLinkedBot, type LinkedBot } from '../../helpers/linked-bot.js';
import { UNPACED_SENDS } from '../../helpers/chat.js';

const ANN = '6281100000001@s.whatsapp.net';
const GROUP = '120363000000000009@g.us';

/** Hands the test its host, as a plugin that schedules work would use it. */
function hostGrabber(found: { host?: PluginHost }) {
  return definePlugin({ name: 'grab', description: 'test: keeps its host', setup: (host) => ((found.host = host), {}) });
}

describe('host.promptAs refusals and host.send splitting (memory transport, fake model on 127.0.0.1)', function () {
  this.timeout(20_000);
  let model: FakeModel;
  let t: TestBot | undefined;
  before(async () => {
    model = await FakeModel.start((r) => `model: ${lastText(r)}`);
  });
  after(() => model.close());
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });
  const start = async (config: Record<string, unknown>) => {
    const found: { host?: PluginHost } = {};
    // The bot's own messages (host.send's parts) go out at once, in order: their pace is safe-sending.test.ts's.
    t = await startTestBot(hostGrabber(found), { model, sendPacing: UNPACED_SENDS, config: { owners: [], ...config } });
    return found.host!;
  };
  const refusal = (p: Promise<unknown>) => p.then(() => undefined, (err: unknown) => (err instanceof PromptRefused ? `${err.code}: ${err.reason}` : `other: ${String(err)}`));

  it('runs for a person the bot answers, and is refused with PLUGIN_PROMPT_REFUSED for a blocked one, one it no longer answers, and a group switched off', async () => {
    const host = await start({ access: { mode: 'everyone', block: ['6281100000002'] }, groups: { policy: 'allowlist' } });
    const asked = model.requests.length;
    expect(await host.promptAs(ANN, ANN, 'hello later')).to.equal('model: hello later');
    expect(model.requests.length).to.equal(asked + 1);
    expect(await refusal(host.promptAs('6281100000002@s.whatsapp.net', '6281100000002@s.whatsapp.net', 'x'))).to.equal('PLUGIN_PROMPT_REFUSED: you are blocked from using the bot');
    expect(await refusal(host.promptAs(GROUP, ANN, 'x'))).to.equal('PLUGIN_PROMPT_REFUSED: the bot is switched off in this group');
    expect(model.requests.length, 'no refused turn reached the model').to.equal(asked + 1);
  });

  it('is refused for a person an owners-only bot no longer answers', async () => {
    const host = await start({ access: { mode: 'owners' } });
    expect(await refusal(host.promptAs(ANN, ANN, 'x'))).to.equal('PLUGIN_PROMPT_REFUSED: the bot no longer answers you');
  });

  it('is refused while the chat is paused (the owner took over), and runs again once the pause is lifted', async () => {
    const host = await start({ access: { mode: 'everyone' } });
    await t!.app.bot.access.pause(ANN, Date.now() + 60_000, 'phone');
    expect(await refusal(host.promptAs(ANN, ANN, 'x'))).to.equal('PLUGIN_PROMPT_REFUSED: the bot is paused in this chat');
    await t!.app.bot.access.resume(ANN);
    expect(await host.promptAs(ANN, ANN, 'back')).to.equal('model: back');
  });

  it('is refused in words when the person is over their AI budget: the model is not asked and the task is not kept in the history', async () => {
    const host = await start({ access: { mode: 'everyone' }, ai: { tokensPerDay: 2 } });
    // The fake model counts 2 tokens a request: the first turn spends the day's budget.
    expect(await host.promptAs(ANN, ANN, 'first')).to.equal('model: first');
    const asked = model.requests.length;
    expect(await refusal(host.promptAs(ANN, ANN, 'second'))).to.match(/^PLUGIN_PROMPT_REFUSED: You have used today's AI budget\. You can ask again in about \d+ hour\(s\) \(after midnight UTC\)\.$/);
    expect(model.requests.length, 'the refused turn did not reach the model').to.equal(asked);
    expect((await t!.app.bot.histories.recent(ANN)).map((e) => e.text)).to.not.include('second');
  });

  it('is refused in words while WhatsApp is not linked (the answer could not be delivered): the model is not asked', async () => {
    const host = await start({ access: { mode: 'everyone' } });
    const asked = model.requests.length;
    // The owner asked to link again (the dashboard's relink): the transport waits for a QR scan.
    await t!.transport.relink();
    expect(await refusal(host.promptAs(ANN, ANN, 'x'))).to.equal('PLUGIN_PROMPT_REFUSED: the bot is not connected to WhatsApp right now (it waits to be linked again)');
    expect(model.requests.length).to.equal(asked);
  });

  it('is refused in words once the bot began to stop, and the model is not asked', async () => {
    const host = await start({ access: { mode: 'everyone' } });
    const asked = model.requests.length;
    const stopped = t!.stop();
    t = undefined;
    expect(await refusal(host.promptAs(ANN, ANN, 'x'))).to.equal('PLUGIN_PROMPT_REFUSED: the bot is stopping');
    await stopped;
    expect(model.requests.length).to.equal(asked);
  });

  it('a turn asked before any transport is connected is refused when the bot stops instead, not left waiting for ever', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wabot-prompt-as-'));
    try {
      await writeFile(path.join(dir, 'config.json'), JSON.stringify({ owners: [], access: { mode: 'everyone' } }));
      const found: { host?: PluginHost } = {};
      const app = await createApp({ cwd: dir, env: { PATH: process.env.PATH ?? '', API_KEY: 'k', BASE_URL: model.url, MODEL: 'test-model' }, plugins: [hostGrabber(found) as never], logDestination: new PassThrough(), skipHealthProbe: true });
      const waiting = refusal(found.host!.promptAs(ANN, ANN, 'x'));
      await app.stop();
      expect(await waiting).to.equal('PLUGIN_PROMPT_REFUSED: the bot is stopping');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('host.send splits a long text at paragraphs into several messages, losing nothing', async () => {
    // To an owner: the bot writes first only to an owner, a chat that wrote and is let in, or an approved recipient.
    const host = await start({ owners: ['6281100000001'] });
    const paragraphs = Array.from({ length: 6 }, (_, i) => `${i}:${'word '.repeat(200).trim()}`);
    await host.send(ANN, paragraphs.join('\n\n'));
    const sent = t!.transport.actions.filter((a) => a.type === 'text').map((a) => (a as { text: string }).text);
    expect(sent.length).to.be.greaterThan(1);
    for (const part of sent) expect(part.length).to.be.at.most(4100);
    expect(sent.join('\n\n').replace(/\s+/g, ' ')).to.equal(paragraphs.join('\n\n').replace(/\s+/g, ' '));
  });
});

describe('host.promptAs while WhatsApp is down (the real WhatsApp transport on the fake Baileys socket)', function () {
  this.timeout(30_000);
  let model: FakeModel;
  let linked: LinkedBot | undefined;
  let dir: string;
  before(async () => {
    model = await FakeModel.start((r) => `model: ${lastText(r)}`);
  });
  after(() => model.close());
  afterEach(async () => {
    await linked?.app.stop();
    linked = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('runs while linked; once the connection dropped (offline until it reconnects) it is refused in words and the model is not asked', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'wabot-prompt-as-wa-'));
    await writeFile(path.join(dir, 'config.json'), JSON.stringify({ owners: [], access: { mode: 'everyone' } }));
    const found: { host?: PluginHost } = {};
    linked = await startLinkedBot({ dir, env: { API_KEY: 'test-key-123456', BASE_URL: model.url, MODEL: 'test-model' }, plugins: [hostGrabber(found) as never] });
    expect(await found.host!.promptAs(ANN, ANN, 'while linked')).to.equal('model: while linked');
    const asked = model.requests.length;
    linked.sockets.last.close(); // a network error: the transport reconnects later
    expect(linked.transport.session().status).to.equal('offline');
    const refusal = await found.host!.promptAs(ANN, ANN, 'x').then(() => 'ran', (err: unknown) => (err instanceof PromptRefused ? err.reason : String(err)));
    expect(refusal).to.equal('the bot is not connected to WhatsApp right now (it is offline)');
    expect(model.requests.length).to.equal(asked);
  });
});
