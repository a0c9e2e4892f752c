import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import pingPlugin from '../../../plugins/ping/index.js';
import visionPlugin from '../../../plugins/vision/index.js';
import { FakeAnthropicGateway } from '../../fakes/anthropic-messages.js';
import type { FakeGateway } from '../../fakes/openai-gateway.js';
import { failures } from '../../fakes/openai-gateway.js';
import { chatImageOf, startOpenAiOnlyGateway } from '../../fakes/openai-only-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeImage, mediaOf } from './images.js';

const texts = (actions: Array<{ type: string }>) => actions.filter((a) => a.type === 'text').map((a) => (a as unknown as { text: string }).text);

describe('vision on a gateway without /v1/messages', function () {
  this.timeout(30_000);
  let openAiOnly: FakeGateway;
  let anthropic: FakeAnthropicGateway;
  let t: TestBot | undefined;
  let redPng: string;

  before(async () => {
    redPng = await makeImage(await tempDir('vision-fallback-'), 'red.png', 'color=c=red:s=64x48');
  });
  beforeEach(async () => {
    openAiOnly = await startOpenAiOnlyGateway('primary');
    anthropic = await FakeAnthropicGateway.start('second');
  });
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await Promise.all([openAiOnly.close(), anthropic.close()]);
  });

  async function start() {
    t = await startTestBot([visionPlugin, pingPlugin], {
      env: {
        PRIMARY_GATEWAY_API_KEY: 'pk-openai-only',
        PRIMARY_GATEWAY_BASE_URL: openAiOnly.url,
        PRIMARY_GATEWAY_MODEL: 'oa-vision',
        API_KEY: 'sk-anthropic-format',
        BASE_URL: anthropic.url,
        MODEL: 'an-vision',
      },
    });
    return t;
  }

  const messagesCalls = () => openAiOnly.http.received('POST /v1/messages');

  it('answers through chat completions with OpenAI image content, and remembers that path for the leg', async () => {
    await start();
    // The date fixed: both answers are counted under one day, even when the test runs across midnight (UTC).
    t!.useClock(['Date']);
    expect(t!.app.capabilities.status('vision').detail).to.equal('primary: not yet verified; second: not yet verified');
    const first = texts(await t!.transport.push({ text: 'what colour is this?', media: await mediaOf(redPng) }));
    expect(first).to.deep.equal(['primary sees via chat: what colour is this?']);
    expect(messagesCalls()).to.have.length(1);
    const [chat] = openAiOnly.chats();
    const image = chatImageOf(chat);
    expect(image.mediaType).to.equal('image/png');
    expect(image.data?.equals(await readFile(redPng))).to.equal(true);
    expect(chat.json.model).to.equal('oa-vision');
    expect(image.system).to.be.a('string').and.not.equal('');
    expect(anthropic.messages()).to.have.length(0);

    const second = texts(await t!.transport.push({ text: 'and now?', media: await mediaOf(redPng) }));
    expect(second).to.deep.equal(['primary sees via chat: and now?']);
    expect(messagesCalls(), 'the remembered path skips /v1/messages').to.have.length(1);
    expect(t!.app.capabilities.status('vision')).to.deep.equal({ ok: true, detail: 'primary: works via /v1/chat/completions (no /v1/messages); second: not yet verified' });
    // The usage ledger counted both answers on the leg that gave them.
    const usage = await t!.app.usage.snapshot();
    const today = Object.values(usage.days)[0];
    expect(today['primary|oa-vision'].requests).to.equal(2);
  });

  it('keeps the failover: a failing chat path moves the image to the next leg, whose /v1/messages works', async () => {
    await start();
    openAiOnly.next(failures.serverError);
    const reply = texts(await t!.transport.push({ text: 'what is it?', media: await mediaOf(redPng) }));
    expect(reply).to.deep.equal(['second sees: what is it?']);
    expect(anthropic.messages()).to.have.length(1);
    const vision = t!.app.capabilities.status('vision');
    expect(vision.ok).to.equal(true);
    expect(vision.degraded).to.equal(true);
    expect(vision.detail).to.match(/^primary: cooling down \(the provider had a server error \(HTTP 500\)\); not yet verified; second: works via \/v1\/messages$/);
  });
});
