import { expect } from 'chai';
import { access } from 'node:fs/promises';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { definePlugin, Store, Type } from '../../core/index.js';
import { audioFailures, FakeAudio, FakeModel, HttpFake, startTestBot, type TestBot } from '../../app/testing/index.js';
import { loadInFreshProcess } from '../helpers/loaded-modules.js';
import { ROOT } from '../helpers/checkout.js';

/** The public test kit (`wa-assistant-bot/testing`) grows what the team's own suite needs. */

const NOTES = Store.chatDoc('notes', Type.Object({ items: Type.Array(Type.String()) }), () => ({ items: [] }));
const notes = definePlugin({
  name: 'notes',
  description: 'keeps notes per chat',
  options: Type.Object({ heading: Type.String({ default: 'notes' }) }),
  stores: [NOTES],
  setup: (host) => ({
    commands: [
      {
        command: 'note',
        run: async (ctx) => {
          await host.store.chat(ctx.chatId).doc(NOTES).save((d) => void d.items.push(ctx.args));
          await ctx.reply('noted');
        },
      },
      { command: 'notes', run: async (ctx) => ctx.reply(`${host.options().heading}: ${(await host.store.chat(ctx.chatId).doc(NOTES).get()).items.join(', ') || 'none'}`) },
    ],
  }),
});

/** Counts a one-minute timer's runs and tells the date the bot sees. */
let minutes = 0;
const ticker = definePlugin({
  name: 'ticker',
  description: 'a timer and the date, for the clock',
  setup: () => {
    let timer: NodeJS.Timeout | undefined;
    return {
      commands: [
        {
          command: 'tick',
          run: async (ctx) => {
            timer = setInterval(() => void minutes++, 60_000);
            await ctx.reply('ticking');
          },
        },
        { command: 'date', run: (ctx) => ctx.reply(new Date().toISOString().slice(0, 10)) },
      ],
      stop: () => clearInterval(timer),
    };
  },
});

/**
 * Transcribes what follows `.hear` as a plugin that uses the audio provider does: the OpenAI client, its keys from
 * `host.audioKeys` (rotation and rests), its address from the settings (`AUDIO_BASE_URL`).
 */
const hearer = definePlugin({
  name: 'hearer',
  description: 'transcribes through the audio provider',
  setup: (host) => ({
    commands: [
      {
        command: 'hear',
        run: async (ctx) => {
          if (!host.settings.audio.keys.length) return ctx.reply('no audio key');
          const text = await host.audioKeys.run('transcription', async (key) => {
            const client = new OpenAI({ apiKey: key, baseURL: host.settings.audio.baseUrl, maxRetries: 0 });
            return (await client.audio.transcriptions.create({ model: 'whisper-test', file: await toFile(Buffer.from(ctx.args), 'note.ogg') })).text;
          });
          await ctx.reply(`heard: ${text}`);
        },
      },
    ],
  }),
});

describe('the test kit (app/testing, wa-assistant-bot/testing)', function () {
  this.timeout(60_000);
  let bot: TestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  it("HttpFake sees the whole request (url with its query, the parsed query, headers, body) and routes by path with any query, an exact query first", async () => {
    const fake = await HttpFake.start({
      'GET /forecast': (req) => ({ status: 200, json: { city: req.query.city, sky: 'grey' } }),
      'POST /notes': (req) => ({ status: 201, text: `kept ${req.text.length} bytes` }),
    });
    try {
      const weather = definePlugin({
        name: 'weather',
        description: 'asks an upstream',
        setup: () => ({
          commands: [
            {
              command: 'weather',
              run: async (ctx) => {
                const res = await fetch(`${fake.url}/forecast?city=${encodeURIComponent(ctx.args)}&days=2&tag=a&tag=b`, { headers: { 'x-api-key': 'weather-key' } });
                const body = (await res.json()) as { city: string; sky: string };
                const kept = await fetch(`${fake.url}/notes`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: `asked about ${body.city}` });
                await ctx.reply(`${body.city}: ${body.sky} (${await kept.text()})`);
              },
            },
          ],
        }),
      });
      bot = await startTestBot(weather);
      expect(await bot.send('.weather Paris')).to.deep.equal(['Paris: grey (kept 17 bytes)']);
      const [asked] = fake.received('GET /forecast');
      expect(asked.url).to.equal('/forecast?city=Paris&days=2&tag=a&tag=b');
      expect(asked.path).to.equal('/forecast');
      expect(asked.query).to.deep.equal({ city: 'Paris', days: '2', tag: ['a', 'b'] });
      expect(asked.headers['x-api-key']).to.equal('weather-key');
      const [note] = fake.received('POST /notes');
      expect(note.text).to.equal('asked about Paris');
      expect(note.headers['content-type']).to.equal('text/plain');
      // The exact query of a route wins over the path alone; received() takes either form.
      fake.next('GET /forecast?city=Rome&days=2&tag=a&tag=b', { status: 200, json: { city: 'Rome', sky: 'sun, once' } });
      expect(await bot.send('.weather Rome')).to.deep.equal(['Rome: sun, once (kept 16 bytes)']);
      expect(await bot.send('.weather Rome')).to.deep.equal(['Rome: grey (kept 16 bytes)']);
      expect(fake.received('GET /forecast?city=Rome&days=2&tag=a&tag=b')).to.have.length(2);
      expect(fake.received('GET /forecast')).to.have.length(3);
    } finally {
      await fake.close();
    }
  });

  it('loads no WhatsApp adapter, Baileys, web server or Koa (the WhatsApp fake has its own subpath)', async () => {
    const { loaded, runtimeNames } = await loadInFreshProcess(path.join(ROOT, 'dist', 'app', 'testing', 'index.js'));
    expect(runtimeNames).to.include.members(['startTestBot', 'FakeModel', 'HttpFake']);
    expect(loaded.some((url) => url.endsWith('/dist/app/app.js')), 'the check sees the app being loaded').to.equal(true);
    const forbidden = [/\/dist\/core\/adapters\/whatsapp\//, /\/node_modules\/@whiskeysockets\/baileys\//, /\/dist\/web\//, /\/node_modules\/koa\//];
    expect(loaded.filter((url) => forbidden.some((re) => re.test(url)))).to.deep.equal([]);
  });

  it('runs several plugins, each enabled, the first with the given options and the others from config.plugins', async () => {
    bot = await startTestBot([notes, ticker], { options: { heading: 'my notes' } });
    expect(await bot.send('.note buy milk')).to.deep.equal(['noted']);
    expect(await bot.send('.notes')).to.deep.equal(['my notes: buy milk']);
    // The date fixed: the plugin's answer and the day expected are the same even across midnight (UTC).
    const clock = bot.useClock(['Date']);
    expect(await bot.send('.date')).to.deep.equal([new Date(clock.now()).toISOString().slice(0, 10)]);
  });

  it("'bundled' runs the plugins the bot ships, discovered as npm start does", async () => {
    bot = await startTestBot('bundled');
    expect((await bot.send('.ping'))[0]).to.match(/^pong \(\d+ ms\)$/);
  });

  it('restart: a new bot over the same folder finds what the first one saved; the old handle stops nothing', async () => {
    const first = await startTestBot(notes);
    await first.send('.note the blue door');
    bot = await first.restart({ options: { heading: 'after restart' } });
    expect(bot.dir).to.equal(first.dir);
    await first.stop();
    await access(bot.dir);
    expect(await bot.send('.notes')).to.deep.equal(['after restart: the blue door']);
    const { dir } = bot;
    await bot.stop();
    bot = undefined;
    let gone = false;
    await access(dir).catch(() => (gone = true));
    expect(gone, 'the kit removes the folder it made, at the last stop').to.equal(true);
  });

  it('useClock: timers and the date move only when the test ticks; stop gives the real clock back', async () => {
    bot = await startTestBot(ticker);
    minutes = 0;
    const clock = bot.useClock();
    await bot.send('.tick');
    await clock.tick(3 * 60_000);
    expect(minutes).to.equal(3);
    await clock.tick(2 * 24 * 3600_000);
    const inTwoDays = new Date(Date.now()).toISOString().slice(0, 10);
    expect(await bot.send('.date')).to.deep.equal([inTwoDays]);
    await bot.stop();
    bot = undefined;
    expect(Math.abs(Date.now() - (performance.timeOrigin + performance.now())), 'Date is real again').to.be.below(5_000);
  });

  it('a FakeModel of the test is shared and kept open; its HttpFake base can make it fail like a gateway', async () => {
    const model = await FakeModel.start(() => 'shared answer');
    try {
      bot = await startTestBot(notes, { model });
      expect(await bot.send('hello')).to.deep.equal(['shared answer']);
      model.http.next('POST /v1/chat/completions', { status: 401, json: { error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } } });
      const [failed] = await bot.send('hello again');
      expect(failed).to.not.equal('shared answer');
      await bot.stop();
      bot = undefined;
      expect(model.requests.length, 'the model outlives the bot').to.equal(1);
      expect(await fetch(`${model.url}/`).then((r) => r.status)).to.equal(200);
    } finally {
      await model.close();
    }
  });

  it('audio: a fake audio provider the bot reaches through AUDIO_BASE_URL with one key; none without it', async () => {
    bot = await startTestBot(hearer);
    expect(await bot.send('.hear abc')).to.deep.equal(['no audio key']);
    expect(bot.audio).to.equal(undefined);
    await bot.stop();

    bot = await startTestBot(hearer, { audio: true });
    bot.audio!.transcript = (upload) => `${upload.bytes.toString()} via ${upload.model}`;
    expect(await bot.send('.hear the blue door')).to.deep.equal(['heard: the blue door via whisper-test']);
    expect(bot.audio!.uploads.map((u) => [u.key, u.fileName])).to.deep.equal([['test-kit-audio-key', 'note.ogg']]);
    // The same fake after a restart, closed at the last stop.
    const again = await bot.restart();
    expect(again.audio).to.equal(bot.audio);
    bot = again;
    const { url } = bot.audio!;
    await bot.stop();
    bot = undefined;
    expect(await fetch(`${url}/`).then(() => 'answered', () => 'closed')).to.equal('closed');
  });

  it('a FakeAudio of the test is kept open, and its per-key failures reach the bot as a provider would answer them', async () => {
    const audio = await FakeAudio.start(() => 'two keys');
    try {
      bot = await startTestBot(hearer, { audio, env: { AUDIO_API_KEYS: 'key-one-1111, key-two-2222' } });
      audio.forKey('key-one-1111', audioFailures.rateLimit(60));
      expect(await bot.send('.hear x')).to.deep.equal(['heard: two keys']);
      expect(audio.uploads.map((u) => u.key)).to.deep.equal(['key-one-1111', 'key-two-2222']);
      await bot.stop();
      bot = undefined;
      expect(await fetch(`${audio.url}/`).then((r) => r.status)).to.equal(200);
    } finally {
      await audio.close();
    }
  });
});
