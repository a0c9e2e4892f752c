import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import premiumPlugin from '../../../plugins/premium/index.js';
import pingPlugin from '../../../plugins/ping/index.js';
import visionPlugin from '../../../plugins/vision/index.js';
import { FakeAnthropicGateway, anthropicFailures, imageOf, message } from '../../fakes/anthropic-messages.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeImage, mediaOf } from './images.js';

const PRIMARY_KEY = 'primary-key-abcdef';
const SECOND_KEY = 'second-key-ghijkl';

describe('vision plugin', function () {
  this.timeout(30_000);
  let primary: FakeAnthropicGateway;
  let second: FakeAnthropicGateway;
  let t: TestBot | undefined;
  let dir: string;
  let redPng: string;
  let bigPng: string;

  before(async () => {
    dir = await tempDir('vision-images-');
    redPng = await makeImage(dir, 'red.png', 'color=c=red:s=64x48');
    bigPng = await makeImage(dir, 'big.png', 'testsrc=s=2000x1500');
  });

  beforeEach(async () => {
    primary = await FakeAnthropicGateway.start('primary');
    second = await FakeAnthropicGateway.start('second');
  });

  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await Promise.all([primary.close(), second.close()]);
  });

  function gatewaysEnv(extra: Record<string, string> = {}): Record<string, string> {
    return {
      // Configured with /v1 on purpose: the SDK adds /v1 itself, and it must not be doubled.
      PRIMARY_GATEWAY_API_KEY: PRIMARY_KEY,
      PRIMARY_GATEWAY_BASE_URL: `${primary.url}/v1`,
      PRIMARY_GATEWAY_MODEL: 'primary-main',
      PRIMARY_GATEWAY_PREMIUM_MODEL: 'primary-premium',
      API_KEY: SECOND_KEY,
      BASE_URL: second.url,
      MODEL: 'second-main',
      ...extra,
    };
  }

  async function start(env: Record<string, string> = gatewaysEnv(), config: Record<string, unknown> = {}) {
    t = await startTestBot([visionPlugin, premiumPlugin, pingPlugin], { env, config });
    return t;
  }

  const texts = (actions: Array<{ type: string }>) => actions.filter((a) => a.type === 'text').map((a) => (a as unknown as { text: string }).text);

  it('sends a photo and its caption to POST /v1/messages as a base64 image block with its media type, model and headers', async () => {
    await start();
    const actions = await t!.transport.push({ text: 'what is this?', media: await mediaOf(redPng) });
    expect(texts(actions)).to.deep.equal(['primary sees: what is this?']);
    const [req] = primary.messages();
    expect(req.path).to.equal('/v1/messages');
    expect(primary.http.requests.map((r) => r.path)).not.to.include('/v1/v1/messages');
    expect(req.headers['x-api-key']).to.equal(PRIMARY_KEY);
    expect(req.headers['anthropic-version']).to.equal('2023-06-01');
    expect(req.json.model).to.equal('primary-main');
    expect(req.json.max_tokens).to.be.a('number');
    const image = imageOf(req);
    expect(image.mediaType).to.equal('image/png');
    expect(image.data?.equals(await readFile(redPng))).to.equal(true);
    expect(image.question).to.equal('what is this?');
    expect(second.messages()).to.have.length(0);
    // Cache breakpoints on the stable prefix (system text, then the image); the question, which varies, carries none.
    const system = req.json.system as Array<{ type: string; text: string; cache_control?: unknown }>;
    expect(system).to.have.length(1);
    expect(system[0].text).to.be.a('string').and.not.equal('');
    expect(system[0].cache_control).to.deep.equal({ type: 'ephemeral' });
    const blocks = req.json.messages[0].content as Array<{ type: string; cache_control?: unknown }>;
    expect(blocks.map((b) => [b.type, b.cache_control ?? null])).to.deep.equal([['image', { type: 'ephemeral' }], ['text', null]]);
  });

  const imageBlocks = (req: { json?: any }) => ((req.json?.messages?.[0]?.content ?? []) as Array<{ type: string; source?: { data: string } }>).filter((b) => b.type === 'image').map((b) => Buffer.from(b.source!.data, 'base64'));

  it('answers the photos of an album (one message per photo, within the window) with one question about all of them', async () => {
    await start(gatewaysEnv(), { conversation: { debounceMs: 300 } });
    const blue = await makeImage(dir, 'album-blue.png', 'color=c=blue:s=64x48');
    const green = await makeImage(dir, 'album-green.png', 'color=c=green:s=64x48');
    // The photos are read first, so the three arrive together, as an album does: nothing between them lets the
    // window close, however busy the machine (a read in between would be a real-time gap).
    const media = [await mediaOf(redPng), await mediaOf(blue), await mediaOf(green)];
    const actions = await Promise.all([
      t!.transport.push({ text: '', media: media[0], id: 'album-1' }),
      t!.transport.push({ text: '', media: media[1], id: 'album-2' }),
      t!.transport.push({ text: 'which colour do you like best?', media: media[2], id: 'album-3' }),
    ]);
    expect(primary.messages()).to.have.length(1);
    const sent = imageBlocks(primary.messages()[0]);
    expect(sent.map((b) => b.equals(sent[0]))).to.deep.equal([true, false, false]);
    expect(sent[0].equals(await readFile(redPng))).to.equal(true);
    expect(sent[1].equals(await readFile(blue))).to.equal(true);
    expect(sent[2].equals(await readFile(green))).to.equal(true);
    expect(imageOf(primary.messages()[0]).question).to.equal('which colour do you like best?');
    // One breakpoint after the last photo covers them all (Anthropic allows four per request).
    const marks = (primary.messages()[0].json.messages[0].content as Array<{ cache_control?: unknown }>).map((b) => Boolean(b.cache_control));
    expect(marks).to.deep.equal([false, false, true, false]);
    expect(texts(actions.at(-1)!)).to.deep.equal(['primary sees: which colour do you like best?']);
    const user = (await t!.app.bot.histories.recent('10000000001@s.whatsapp.net', 10)).filter((e) => e.role === 'user');
    expect(user.map((e) => e.text)).to.deep.equal(['[sent 3 photos] which colour do you like best?']);
  });

  it('looks at no more than plugins.vision.maxPhotosPerTurn photos of an album and says so', async () => {
    await start(gatewaysEnv(), { conversation: { debounceMs: 300 }, plugins: { vision: { maxPhotosPerTurn: 2 } } });
    const red = await mediaOf(redPng);
    const actions = await Promise.all([1, 2, 3].map((i) => t!.transport.push({ text: i === 3 ? 'compare them' : '', media: red, id: `many-${i}` })));
    expect(primary.messages()).to.have.length(1);
    expect(imageBlocks(primary.messages()[0])).to.have.length(2);
    expect(actions.flatMap(texts).join('\n')).to.include('I looked at the first 2 of your 3 photos');
  });

  it('counts image questions in the usage ledger and against the sender\'s AI budget', async () => {
    await start(gatewaysEnv(), { ai: { requestsPerMinute: 1, tokensPerDay: 0, premiumTokensPerDay: 0, quotaMainTokens: 0, quotaPremiumTokens: 0, maxToolRounds: 3, showProvider: false } });
    // The date fixed: the day the question is counted under is the day expected, even across midnight (UTC).
    const clock = t!.useClock(['Date']);
    await t!.transport.push({ text: 'what is this?', media: await mediaOf(redPng) });
    const [limited] = texts(await t!.transport.push({ text: 'and now?', media: await mediaOf(redPng) }));
    expect(limited).to.match(/try again in \d+ seconds/);
    expect(primary.messages()).to.have.length(1);
    const usage = await t!.app.usage.snapshot();
    expect(usage.days[new Date(clock.now()).toISOString().slice(0, 10)]['primary|primary-main']).to.deep.equal({ prompt: 20, completion: 8, total: 28, requests: 1 });
  });

  it('puts the exchange into the chat history, so a follow-up through the normal chat knows the answer', async () => {
    await start();
    await t!.transport.push({ text: 'what is this?', media: await mediaOf(redPng) });
    const history = await t!.app.bot.histories.recent('10000000001@s.whatsapp.net');
    expect(history.map((h) => [h.role, h.text])).to.deep.equal([
      ['user', '[sent an image] what is this?'],
      ['assistant', 'primary sees: what is this?'],
    ]);
    const follow = await t!.transport.push({ text: 'and is it dark?' });
    expect(texts(follow)).to.deep.equal(['primary: and is it dark?']);
    const chat = primary.chats()[0].json.messages as Array<{ role: string; content: string }>;
    expect(chat.map((m) => m.content)).to.include('primary sees: what is this?');
  });

  it('answers in WhatsApp formatting, like chat answers: the model\'s Markdown converted, a long answer split at paragraphs', async () => {
    await start();
    const paragraph = (n: number) => `Paragraph ${n}: ${'the red square sits on a plain background. '.repeat(40).trim()}`;
    const markdown = ['## What I see', '**A red square** and ~~nothing~~ more, see [the docs](https://example.org/red).', paragraph(1), paragraph(2), paragraph(3)].join('\n\n');
    primary.nextMessage({ status: 200, json: message(markdown, 'primary-main') });
    const actions = await t!.transport.push({ text: 'what is this?', media: await mediaOf(redPng) });
    const parts = texts(actions);
    expect(parts.length, 'a 5,000-character answer goes as several messages').to.be.greaterThan(1);
    expect(parts[0]).to.match(/^\*What I see\*\n\n\*A red square\* and ~nothing~ more, see the docs \(https:\/\/example\.org\/red\)\./);
    expect(parts.every((p) => p.length <= 4000)).to.equal(true);
    // Cut at paragraphs: each part ends a paragraph, and nothing is lost.
    expect(parts.join('\n\n')).to.equal(['*What I see*', '*A red square* and ~nothing~ more, see the docs (https://example.org/red).', paragraph(1), paragraph(2), paragraph(3)].join('\n\n'));
    // What the history keeps is what was said.
    const history = await t!.app.bot.histories.recent('10000000001@s.whatsapp.net');
    expect(history[1].text).to.equal(parts.join('\n\n'));
  });

  it('asks a default question for a photo without a caption', async () => {
    await start();
    const actions = await t!.transport.push({ media: await mediaOf(redPng) });
    expect(texts(actions)[0]).to.match(/^primary sees: What is in this image/);
  });

  it('fails over to the second gateway on 429 and skips the primary during its cooldown', async () => {
    await start();
    primary.nextMessage(anthropicFailures.rateLimit(600));
    const first = await t!.transport.push({ text: 'what is this?', media: await mediaOf(redPng) });
    expect(texts(first)).to.deep.equal(['second sees: what is this?']);
    expect(second.messages()[0].headers['x-api-key']).to.equal(SECOND_KEY);
    expect(second.messages()[0].json.model).to.equal('second-main');
    const again = await t!.transport.push({ text: 'and now?', media: await mediaOf(redPng) });
    expect(texts(again)).to.deep.equal(['second sees: and now?']);
    expect(primary.messages()).to.have.length(1);
    expect(second.messages()).to.have.length(2);
    const warned = t!.logs().find((l) => l.purpose === 'vision' && l.failure === 'rate-limit');
    expect(warned?.leg).to.equal('primary');
  });

  it('fails over on an overloaded (529) primary, classified as a server failure', async () => {
    await start();
    primary.nextMessage(anthropicFailures.overloaded);
    expect(texts(await t!.transport.push({ text: 'one', media: await mediaOf(redPng) }))).to.deep.equal(['second sees: one']);
    expect(t!.logs().find((l) => l.purpose === 'vision' && l.leg === 'primary')?.failure).to.equal('server');
  });

  it('treats a 401 from the messages endpoint as a rejected key: the leg is skipped afterwards', async () => {
    await start();
    primary.nextMessage(anthropicFailures.badKey);
    await t!.transport.push({ text: 'one', media: await mediaOf(redPng) });
    await t!.transport.push({ text: 'two', media: await mediaOf(redPng) });
    expect(primary.messages()).to.have.length(1);
    expect(second.messages().map((r) => imageOf(r).question)).to.deep.equal(['one', 'two']);
    expect(t!.logs().some((l) => l.failure === 'auth' && l.leg === 'primary')).to.equal(true);
  });

  it('says it cannot look at images when every gateway fails, without leaking details', async () => {
    await start();
    primary.nextMessage(anthropicFailures.overloaded);
    second.nextMessage(anthropicFailures.badKey);
    const actions = await t!.transport.push({ text: 'what is this?', media: await mediaOf(redPng) });
    const [reply] = texts(actions);
    expect(reply).to.match(/can't look at images right now/);
    expect(reply).not.to.match(/401|529|key/i);
  });

  it('without any gateway (audio keys only) replies that it cannot see images', async () => {
    await start({ API_KEY: '', AUDIO_API_KEYS: 'audio-key-1234', AUDIO_BASE_URL: 'http://127.0.0.1:9' });
    const actions = await t!.transport.push({ text: 'what is this?', media: await mediaOf(redPng) });
    expect(texts(actions)).to.have.length(1);
    expect(texts(actions)[0]).to.match(/^I can't see images right now/);
    expect(t!.logs().some((l) => /✘ vision/.test(String(l.msg)))).to.equal(true);
  });

  it('answers a question that quotes a photo, and uses the premium model for that message when asked explicitly', async () => {
    await start();
    const photo = await mediaOf(redPng);
    const quoted = { id: 'photo-1', senderId: '10000000001@s.whatsapp.net', text: '', fromBot: false, media: photo };
    const plain = await t!.transport.push({ text: 'what colour is it?', quoted });
    expect(texts(plain)).to.deep.equal(['primary sees: what colour is it?']);
    const premium = await t!.transport.push({ text: 'use the premium model: what colour is it?', quoted });
    expect(texts(premium)).to.deep.equal(['primary sees: what colour is it?']);
    expect(primary.messages().map((r) => r.json.model)).to.deep.equal(['primary-main', 'primary-premium']);
    const next = await t!.transport.push({ text: 'and now?', quoted });
    expect(texts(next)).to.have.length(1);
    expect(primary.messages()[2].json.model).to.equal('primary-main');
  });

  it('answers with the normal model and says so when the premium model is asked for but none is configured', async () => {
    await start(gatewaysEnv({ PRIMARY_GATEWAY_PREMIUM_MODEL: '' }));
    const actions = await t!.transport.push({ text: 'pakai model premium apa ini?', media: await mediaOf(redPng) });
    expect(texts(actions)[0]).to.match(/No premium model is configured/);
    expect(texts(actions)[0]).to.include('primary sees: apa ini?');
    expect(primary.messages()[0].json.model).to.equal('primary-main');
  });

  it('handles stickers (quoted by a question) and image documents, sending the real type of the bytes; a bare sticker gets no model call and no text', async () => {
    await start();
    const webp = await makeImage(dir, 'sticker.webp', 'color=c=blue:s=96x96');
    const jpg = await makeImage(dir, 'photo.jpg', 'color=c=green:s=80x60');
    const sticker = await mediaOf(webp, 'sticker', 'image/webp');
    expect(await t!.transport.push({ media: sticker })).to.deep.equal([]);
    expect(primary.messages()).to.have.length(0);
    await t!.transport.push({ text: 'what is on this sticker?', quoted: { id: 'sticker-1', senderId: '10000000001@s.whatsapp.net', text: '', fromBot: false, media: sticker } });
    // A document whose reported type is wrong: the bytes are JPEG.
    await t!.transport.push({ text: 'read this', media: await mediaOf(jpg, 'document', 'image/png') });
    expect(primary.messages().map((r) => imageOf(r).mediaType)).to.deep.equal(['image/webp', 'image/jpeg']);
  });

  it('leaves documents that are not images, and images whose caption is a command, to others', async () => {
    await start();
    await t!.transport.push({ text: 'a pdf', media: { kind: 'document', mimetype: 'application/pdf', download: async () => Buffer.from('%PDF-1.4') } });
    const ping = await t!.transport.push({ text: '.ping', media: await mediaOf(redPng) });
    expect(texts(ping)[0]).to.match(/^pong/);
    expect(primary.messages()).to.have.length(0);
  });

  it('downscales an image over the size limit with ffmpeg into a JPEG under the limit', async () => {
    await start(gatewaysEnv(), { plugins: { vision: { enabled: true, maxImageBytes: 20_000, maxDimension: 400 } } });
    const original = await readFile(bigPng);
    expect(original.length).to.be.greaterThan(20_000);
    const actions = await t!.transport.push({ text: 'what is this?', media: await mediaOf(bigPng) });
    expect(texts(actions)).to.deep.equal(['primary sees: what is this?']);
    const image = imageOf(primary.messages()[0]);
    expect(image.mediaType).to.equal('image/jpeg');
    expect(image.data!.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))).to.equal(true);
    expect(image.data!.length).to.be.at.most(20_000);
  });

  it('refuses an image over the limit clearly when ffmpeg is not available', async () => {
    await start(gatewaysEnv({ FFMPEG_PATH: '/nonexistent/ffmpeg' }), { plugins: { vision: { enabled: true, maxImageBytes: 20_000 } } });
    const actions = await t!.transport.push({ text: 'what is this?', media: await mediaOf(bigPng) });
    expect(texts(actions)[0]).to.match(/too large for me .*send a smaller one/);
    expect(primary.messages()).to.have.length(0);
    // A small image still works without ffmpeg.
    expect(texts(await t!.transport.push({ text: 'ok?', media: await mediaOf(redPng) }))).to.deep.equal(['primary sees: ok?']);
  });

  it('replies clearly to a broken image and to a download that fails, and keeps working', async () => {
    await start();
    const broken = await t!.transport.push({ text: 'what is this?', media: await mediaOf(Buffer.from('not an image at all'), 'image', 'image/jpeg') });
    expect(texts(broken)[0]).to.match(/could not open that image/);
    const failing = await t!.transport.push({ media: { kind: 'image', mimetype: 'image/jpeg', download: async () => Promise.reject(new Error('media expired')) } });
    expect(texts(failing)[0]).to.match(/could not download that image/);
    expect(primary.messages()).to.have.length(0);
    expect(texts(await t!.transport.push({ text: 'ok?', media: await mediaOf(redPng) }))).to.deep.equal(['primary sees: ok?']);
  });
});
