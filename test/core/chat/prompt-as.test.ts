import { expect } from 'chai';
import { definePlugin, PromptRefused, type PluginHost } from '../../../core/index.js';
import { FakeModel, lastText, startTestBot, type TestBot } from '../../../app/testing/index.js';

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
    t = await startTestBot(hostGrabber(found), { model, config: { owners: [], ...config } });
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

  it('host.send splits a long text at paragraphs into several messages, losing nothing', async () => {
    const host = await start({});
    const paragraphs = Array.from({ length: 6 }, (_, i) => `${i}:${'word '.repeat(200).trim()}`);
    await host.send(ANN, paragraphs.join('\n\n'));
    const sent = t!.transport.actions.filter((a) => a.type === 'text').map((a) => (a as { text: string }).text);
    expect(sent.length).to.be.greaterThan(1);
    for (const part of sent) expect(part.length).to.be.at.most(4100);
    expect(sent.join('\n\n').replace(/\s+/g, ' ')).to.equal(paragraphs.join('\n\n').replace(/\s+/g, ' '));
  });
});
