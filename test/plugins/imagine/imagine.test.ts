import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import imaginePlugin, { GATEWAY_HAS_NONE, NO_IMAGE_MODEL, testHooks } from '../../../plugins/imagine/index.js';
import { completion } from '../../fakes/openai-gateway.js';
import type { RecordedRequest } from '../../../app/testing/http-fake.js';
import { FakeImagesGateway, TINY_PNG } from '../../fakes/images-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { shippedExample, tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat } from '../../helpers/console-chat.js';

const KEY = 'sk-image-gateway-key-998877';
const OWNER = '6281100000001';

type Action = { type: string; text?: string; chatId?: string; media?: { kind: string; path: string; mimetype?: string } };
const texts = (actions: Action[]) => actions.filter((a) => a.type === 'text').map((a) => a.text);
const media = (actions: Action[]) => actions.filter((a) => a.type === 'media').map((a) => a.media!);
const toolNames = (req: RecordedRequest) => ((req.json?.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);

describe('imagine plugin (image generation)', function () {
  this.timeout(30_000);
  let gateway: FakeImagesGateway;
  let t: TestBot | undefined;

  afterEach(async () => {
    testHooks.allowForTests = undefined;
    await t?.stop();
    t = undefined;
    await gateway?.close();
  });

  async function start(images: boolean | number, env: Record<string, string> = { IMAGE_MODEL: 'gpt-image-1' }, pluginOptions: Record<string, unknown> = {}, chat?: Parameters<typeof FakeImagesGateway.start>[0]['chat']) {
    gateway = await FakeImagesGateway.start({ images: images === true, imagesStatus: typeof images === 'number' ? images : undefined, chat });
    t = await startTestBot([imaginePlugin], {
      env: { API_KEY: KEY, BASE_URL: gateway.url, MODEL: 'main-model', ...env },
      config: { owners: [OWNER], plugins: { imagine: { enabled: true, ...pluginOptions } } },
    });
    return t;
  }

  const noKeyAnywhere = () => {
    const logs = JSON.stringify(t!.logs());
    expect(logs).not.to.include(KEY);
    expect(t!.transport.texts().join('\n')).not.to.include(KEY);
  };

  it('.imagine asks the gateway images endpoint with the IMAGE_MODEL and sends the b64_json picture as an image', async () => {
    await start(true);
    // With an image model, .help lists it as available.
    expect(texts((await t!.transport.push({ text: '.help' })) as Action[])[0]).to.match(/^\.imagine <description>: draw a picture/m);
    const actions = (await t!.transport.push({ text: '.imagine  a red   fox in snow' })) as Action[];
    const [request] = gateway.imageRequests();
    expect(request.headers.authorization).to.equal(`Bearer ${KEY}`);
    expect(request.json).to.deep.include({ model: 'gpt-image-1', prompt: 'a red fox in snow', n: 1, size: '1024x1024' });
    const [picture] = media(actions);
    expect(picture).to.include({ kind: 'image', mimetype: 'image/png' });
    expect((await readFile(picture.path)).equals(TINY_PNG)).to.equal(true);
    expect(texts(actions)).to.deep.equal([]);
    noKeyAnywhere();
  });

  it('a picture given as a URL is fetched under the egress check: allowed destination fetched, a loopback one refused', async () => {
    await start(true);
    const port = new URL(gateway.url).port;
    testHooks.allowForTests = [`127.0.0.1:${port}`];
    gateway.answerWithUrl();
    const [picture] = media((await t!.transport.push({ text: '.imagine a fox' })) as Action[]);
    expect((await readFile(picture.path)).equals(TINY_PNG)).to.equal(true);
    expect(gateway.pictureFetches()).to.have.length(1);

    testHooks.allowForTests = undefined;
    gateway.answerWithUrl();
    const actions = (await t!.transport.push({ text: '.imagine another fox' })) as Action[];
    expect(media(actions)).to.deep.equal([]);
    expect(texts(actions)).to.deep.equal(['The image service sent back something I cannot use as a picture. Please try again.']);
    // The loopback address was refused before any connection: the fake received nothing more.
    expect(gateway.pictureFetches()).to.have.length(1);
  });

  it('a redirect from an allowed picture URL to another local address is checked again and refused', async () => {
    await start(true);
    const port = new URL(gateway.url).port;
    testHooks.allowForTests = [`127.0.0.1:${port}`];
    gateway.http.next('GET /pictures/fox.png', { status: 302, json: {}, headers: { location: `http://127.0.0.2:${port}/pictures/fox.png` } });
    gateway.answerWithUrl();
    const actions = (await t!.transport.push({ text: '.imagine a fox' })) as Action[];
    expect(media(actions)).to.deep.equal([]);
    expect(texts(actions)).to.deep.equal(['The image service sent back something I cannot use as a picture. Please try again.']);
    expect(gateway.pictureFetches()).to.have.length(1);
    expect(t!.logs().some((l) => l.reason === '127.0.0.2 is a local or private address')).to.equal(true);
  });

  it('an answer that is not a picture is refused in words, never sent', async () => {
    await start(true);
    gateway.next({ status: 200, json: { data: [{ b64_json: Buffer.from('#!/bin/sh\necho hi\n').toString('base64') }] } });
    const actions = (await t!.transport.push({ text: '.imagine a fox' })) as Action[];
    expect(media(actions)).to.deep.equal([]);
    expect(texts(actions)).to.deep.equal(['The image service sent back something I cannot use as a picture. Please try again.']);
  });

  for (const status of [404, 405, 501]) {
    it(`a gateway answering ${status} has no image model: said in the reply, said once in the log, and not asked again`, async () => {
      await start(status === 404 ? false : status);
      expect(texts((await t!.transport.push({ text: '.imagine a fox' })) as Action[])).to.deep.equal([GATEWAY_HAS_NONE]);
      expect(texts((await t!.transport.push({ text: '.imagine a cat' })) as Action[])).to.deep.equal([GATEWAY_HAS_NONE]);
      expect(gateway.imageRequests()).to.have.length(1);
      expect(t!.logs().filter((l) => /no image endpoint/.test(String(l.msg)))).to.have.length(1);
      noKeyAnywhere();
    });
  }

  it('without IMAGE_MODEL: the start log says imageGen is off and .imagine says why, the gateway is not asked', async () => {
    await start(true, {});
    expect(t!.logs().some((l) => /– imageGen\s+no IMAGE_MODEL/.test(String(l.msg)))).to.equal(true);
    expect(texts((await t!.transport.push({ text: '.imagine a fox' })) as Action[])).to.deep.equal([NO_IMAGE_MODEL]);
    expect(gateway.imageRequests()).to.have.length(0);
    // .help offers it only where it works now: here it is under "Off here", with the reason.
    const [help] = texts((await t!.transport.push({ text: '.help' })) as Action[]);
    expect(help).to.not.match(/^\.imagine/m);
    expect(help).to.match(/Off here: .*\.imagine \(no IMAGE_MODEL: the bot cannot draw pictures/);
  });

  it('counts pictures per person per day: over the cap is refused, another person and the owner still draw, failures are given back', async () => {
    await start(true, undefined, { dailyImagesPerUser: 1 });
    gateway.next({ status: 200, json: { data: [{ b64_json: Buffer.from('not a picture').toString('base64') }] } });
    const failed = texts((await t!.transport.push({ senderId: '6281200000001', text: '.imagine a fox' })) as Action[]);
    expect(failed[0]).to.match(/cannot use as a picture/);
    expect(media((await t!.transport.push({ senderId: '6281200000001', text: '.imagine a fox' })) as Action[])).to.have.length(1);
    expect(texts((await t!.transport.push({ senderId: '6281200000001', text: '.imagine a cat' })) as Action[])).to.deep.equal([
      'You have had your 1 pictures for today. Try again tomorrow.',
    ]);
    expect(media((await t!.transport.push({ senderId: '6281200000002', text: '.imagine a cat' })) as Action[])).to.have.length(1);
    await t!.transport.push({ senderId: OWNER, text: '.imagine a cat' });
    expect(media((await t!.transport.push({ senderId: OWNER, text: '.imagine a dog' })) as Action[])).to.have.length(1);
    expect(gateway.imageRequests()).to.have.length(5);
  });

  it('offers generate_image to the model, which sends the picture into the asking chat (a group here)', async () => {
    const GROUP = '120363000000000088@g.us';
    await start(true, undefined, {}, (req) => {
      const messages = (req.json?.messages ?? []) as Array<{ role: string; content: unknown }>;
      if (messages.some((m) => m.role === 'tool')) return { status: 200, json: completion('Here is your fox.') };
      if (toolNames(req).includes('generate_image')) {
        return { status: 200, json: completion(null, { toolCalls: [{ id: 'c1', name: 'generate_image', arguments: JSON.stringify({ prompt: 'a fox in snow' }) }] }) };
      }
      return { status: 200, json: completion('no tool') };
    });
    const actions = (await t!.transport.push({ chatId: GROUP, isGroup: true, senderId: '6281200000003', text: '@bot draw me a fox', mentions: [], quoted: { id: 'bot-1', senderId: 'bot', text: 'hi', fromBot: true } })) as Action[];
    const sent = actions.filter((a) => a.type === 'media');
    expect(sent).to.have.length(1);
    expect(sent[0].chatId).to.equal(GROUP);
    expect(gateway.imageRequests()[0].json.prompt).to.equal('a fox in snow');
    expect(texts(actions)).to.deep.equal(['Here is your fox.']);
  });

  it('a sender past their AI budget gets no paid picture (the image endpoint is not asked); the owner still does', async () => {
    gateway = await FakeImagesGateway.start({ images: true });
    const example = await shippedExample();
    t = await startTestBot([imaginePlugin], {
      env: { API_KEY: KEY, BASE_URL: gateway.url, MODEL: 'main-model', IMAGE_MODEL: 'gpt-image-1' },
      config: { owners: [OWNER], ai: { ...example.ai, requestsPerMinute: 1 }, plugins: { imagine: { enabled: true } } },
    });
    expect(media((await t.transport.push({ senderId: '6281200000009', text: '.imagine a fox' })) as Action[])).to.have.length(1);
    const refused = (await t.transport.push({ senderId: '6281200000009', text: '.imagine another fox' })) as Action[];
    expect(media(refused)).to.deep.equal([]);
    expect(texts(refused)[0]).to.match(/^You have sent a lot of requests/);
    expect(gateway.imageRequests()).to.have.length(1);
    await t.transport.push({ senderId: OWNER, text: '.imagine a cat' });
    expect(media((await t.transport.push({ senderId: OWNER, text: '.imagine a dog' })) as Action[])).to.have.length(1);
    expect(gateway.imageRequests()).to.have.length(3);
  });

  it('generate_image is offered while imageGen is up and withdrawn from the model once the gateway proves to have no image model', async () => {
    await start(404, undefined, {}, () => ({ status: 200, json: completion('ok') }));
    await t!.transport.push({ text: 'hello there' });
    expect(toolNames(gateway.chats()[0]!)).to.include('generate_image');
    expect(texts((await t!.transport.push({ text: '.imagine a fox' })) as Action[])).to.deep.equal([GATEWAY_HAS_NONE]);
    await t!.transport.push({ text: 'draw me a fox' });
    const last = gateway.chats().at(-1)!;
    expect(JSON.stringify(last.json.messages)).to.include('draw me a fox');
    expect(toolNames(last)).to.not.include('generate_image');
  });

  it('on the console, .imagine prints bot [image] <path> of the PNG', async () => {
    gateway = await FakeImagesGateway.start({ images: true });
    const dir = await tempDir();
    await mkdir(path.join(dir, 'data'), { recursive: true });
    await writeConfig(dir, { plugins: { imagine: { enabled: true } } });
    const run = await runConsoleChat('.imagine a fox\n', { cwd: dir, env: { API_KEY: KEY, BASE_URL: gateway.url, MODEL: 'm', IMAGE_MODEL: 'gpt-image-1' } });
    const line = run.lines.find((l) => l.startsWith('bot [image] '));
    expect(line, run.stdout + run.stderr).to.be.a('string');
    expect((await readFile(line!.slice('bot [image] '.length))).equals(TINY_PNG)).to.equal(true);
    expect(run.stdout + run.stderr).not.to.include(KEY);
  });
});
