import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';
import { askVision } from '../../../core/builtin.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { KeyPool } from '../../../core/services/providers/key-pool.js';
import { checkChatLeg, probeModels } from '../../../core/services/providers/leg-check.js';
import type { ProviderLeg } from '../../../core/services/providers/types.js';
import { AudioProvider } from '../../../plugins/voice/audio-provider.js';
import { FloodServer } from '../../fakes/flood-server.js';
import { completion } from '../../fakes/openai-gateway.js';

const MB = 1024 * 1024;
/** What each upstream offers: half a gigabyte, made up as it is sent. */
const OFFERED = 512 * MB;
const OWNER = '6281100000001';

const jsonFlood = (head: string) => ({ contentType: 'application/json', head, bytes: OFFERED });
const chatFlood = jsonFlood('{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"');

/** What the bot took in: its bound plus what the sockets buffer, never the half gigabyte on offer. */
async function expectCutOffNear(up: FloodServer, boundBytes: number): Promise<void> {
  expect(up.written.length, 'floods sent').to.be.greaterThan(0);
  for (const written of await Promise.all(up.written)) expect(written, 'bytes the upstream got written').to.be.below(boundBytes + 32 * MB);
}

/**
 * Answers from the gateways an owner configured (chat, vision, audio) are read through their SDKs (openai,
 * anthropic), which read an answer whole: each client reads through a fetch bounded by the bytes received, so a
 * gateway answering with half a gigabyte costs the bot its bound and a clear error, never its memory.
 */
describe("owner's gateways: SDK answers bounded by the bytes received", function () {
  this.timeout(120_000);
  let up: FloodServer | undefined;
  let bot: TestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    await up?.close();
    bot = up = undefined;
  });

  it('the chat gateway answering half a gigabyte: cut off at 8 MB, the log names why, and the bot answers again once the gateway is sane', async () => {
    up = await FloodServer.start({ 'POST /v1/chat/completions': chatFlood });
    bot = await startTestBot([], { config: { owners: [OWNER] }, env: { BASE_URL: up.url } });
    const [failed] = await bot.send({ text: 'hello there', senderId: `${OWNER}@s.whatsapp.net`, chatId: `${OWNER}@s.whatsapp.net` });
    expect(failed, 'the turn still gets an answer').to.match(/cannot reach any AI provider right now/);
    await expectCutOffNear(up, 8 * MB);
    expect(JSON.stringify(bot.logs())).to.match(/the answer of \w+ is larger than 8388608 bytes/);
    up.routes['POST /v1/chat/completions'] = (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion('sane again')));
    };
    // The leg rests a little after a bad answer; the kit's clock moves past that rest.
    const clock = bot.useClock(['Date']);
    await clock.tick(60_000);
    const [next] = await bot.send({ text: 'and now?', senderId: `${OWNER}@s.whatsapp.net`, chatId: `${OWNER}@s.whatsapp.net` });
    expect(next).to.match(/sane again/);
  });

  describe('vision, on either of its paths', () => {
    const leg = (url: string): ProviderLeg => ({ name: 'primary', kind: 'gateway', baseUrl: `${url}/v1`, rootUrl: url, apiKey: 'vision-key', model: 'm', premiumModel: '' });
    // One leg, asked once: the chain's failover is not what is tested here.
    const ai = (url: string) => ({ failover: (_what: string, run: (leg: ProviderLeg) => Promise<unknown>) => run(leg(url)) }) as never;
    const request = { image: { mediaType: 'image/png' as const, data: Buffer.from('png') }, question: 'what is it?', system: 's', premium: false, maxTokens: 50, timeoutMs: 60_000 };

    it("the messages path (anthropic SDK): a half-gigabyte answer is refused at 8 MB", async () => {
      up = await FloodServer.start({ 'POST /v1/messages': jsonFlood('{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"') });
      const err = await askVision(ai(up.url), request).then(() => undefined, (e: Error) => e);
      expect(err?.message).to.match(/the answer of primary is larger than 8388608 bytes/);
      await expectCutOffNear(up, 8 * MB);
    });

    it('the chat path (openai SDK), for a gateway without /v1/messages: a half-gigabyte answer is refused at 8 MB', async () => {
      up = await FloodServer.start({
        'POST /v1/messages': (req, res) => {
          req.resume();
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        },
        'POST /v1/chat/completions': chatFlood,
      });
      const err = await askVision(ai(up.url), request).then(() => undefined, (e: Error) => e);
      expect(err?.message).to.match(/the answer of primary is larger than 8388608 bytes/);
      await expectCutOffNear(up, 8 * MB);
    });
  });

  describe('the audio provider', () => {
    const provider = (url: string) => {
      const pool = new KeyPool(['audio-key-aaaaaa'], createLogger({ level: 'silent', pretty: false, destination: new PassThrough() }));
      return new AudioProvider(pool, { baseUrl: url, model: 'whisper', chatModel: 'chat', timeoutMs: 60_000 });
    };

    it('a transcript answer of half a gigabyte is refused at 8 MB', async () => {
      up = await FloodServer.start({ 'POST /v1/audio/transcriptions': jsonFlood('{"text":"') });
      const err = await provider(up.url).transcribe({ bytes: Buffer.from('ogg'), fileName: 'voice.ogg', mimetype: 'audio/ogg' }).then(() => undefined, (e: Error) => e);
      expect(err?.message).to.match(/the audio provider's answer is larger than 8388608 bytes/);
      await expectCutOffNear(up, 8 * MB);
    });

    it("a reaction's chat answer of half a gigabyte is refused at 8 MB", async () => {
      up = await FloodServer.start({ 'POST /v1/chat/completions': chatFlood });
      const err = await provider(up.url).chat('s', 'u', 60_000).then(() => undefined, (e: Error) => e);
      expect(err?.message).to.match(/the audio provider's answer is larger than 8388608 bytes/);
      await expectCutOffNear(up, 8 * MB);
    });

    it('spoken audio of half a gigabyte is refused at 64 MB (twenty minutes of speech and more)', async () => {
      up = await FloodServer.start({ 'POST /v1/audio/speech': { contentType: 'audio/wav', head: 'RIFF', bytes: OFFERED } });
      const err = await provider(up.url).speak('hello').then(() => undefined, (e: Error) => e);
      expect(err?.message).to.match(/the audio provider's answer is larger than 67108864 bytes/);
      await expectCutOffNear(up, 64 * MB);
    });
  });

  it("set-up's and the doctor's checks of a gateway: a half-gigabyte answer is cut off (1 MB for a one-word question, 8 MB for the list of models)", async () => {
    up = await FloodServer.start({ 'POST /v1/chat/completions': chatFlood, 'GET /v1/models': jsonFlood('{"object":"list","data":[{"id":"') });
    const check = await checkChatLeg({ baseUrl: up.url, apiKey: 'setup-key-123456', model: 'm', timeoutMs: 60_000 });
    expect(check).to.include({ ok: false, problem: 'wrong-url' });
    expect(check.detail).to.match(/answered a one-word question with more than 1 MB/);
    expect(await probeModels({ baseUrl: up.url, apiKey: 'setup-key-123456', timeoutMs: 60_000 })).to.deep.equal({});
    await expectCutOffNear(up, 8 * MB);
  });
});
