import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { definePlugin, Type } from '../../core/index.js';
import pingPlugin from '../../plugins/ping/index.js';
import { formatBytes, formatTime } from '../../web/format.js';
import { UNPACED_SENDS } from '../helpers/chat.js';
import { formFields, login, request, sameOrigin, startWebTest, TOKEN, type WebTest } from './web-helpers.js';

/** A plugin with every shape of option the form knows, and one it shows read-only. */
const shapes = definePlugin({
  name: 'shapes',
  description: 'Has every kind of option (dashboard test)',
  options: Type.Object(
    {
      voiceName: Type.String({ title: 'Voice of the answers', default: 'alloy', description: 'The voice spoken answers use.' }),
      mood: Type.Union([Type.Literal('calm'), Type.Literal('cheerful'), Type.Literal('serious')], { default: 'calm', description: 'How the bot sounds' }),
      level: Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3)], { default: 1 }),
      colour: Type.Enum({ red: 'red', blue: 'blue' }, { default: 'red', description: 'Colour of the cards' }),
      bannedWords: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'words the bot never repeats; a message with one gets a polite refusal instead of an answer' }),
      quietHours: Type.Array(Type.Integer({ minimum: 0, maximum: 23 }), { default: [] }),
      limits: Type.Object(
        {
          perHour: Type.Integer({ minimum: 1, default: 10, description: 'Answers per hour' }),
          strict: Type.Boolean({ default: false, description: 'Refuse instead of queueing' }),
        },
        { default: {}, additionalProperties: false },
      ),
      // Not in the file: left alone, it must stay out of it (no empty object written).
      style: Type.Object({ size: Type.Integer({ minimum: 8, default: 12 }), font: Type.String({ default: 'serif' }) }, { default: {}, additionalProperties: false }),
      aliases: Type.Record(Type.String(), Type.String(), { default: {}, description: 'other names' }),
    },
    { additionalProperties: false },
  ),
  setup: () => ({}),
});

/** A plugin with a top-level section of config.json that is not plain text. */
const quiet = definePlugin({
  name: 'quiet',
  description: 'Quiet hours (dashboard test)',
  configSection: {
    key: 'quietTimes',
    schema: Type.Object(
      { from: Type.Integer({ minimum: 0, maximum: 23, default: 22, description: 'Hour the quiet starts' }), days: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'Days it holds' }) },
      { default: {}, additionalProperties: false, title: 'Quiet times' },
    ),
  },
  setup: () => ({}),
});

/** config.json as an owner keeps it: four-space indentation, a setting the dashboard does not show, a section of a plugin not installed. */
const OWNER_FILE = {
  prefix: '.',
  botName: 'Bot',
  history: { maxMessages: 40 },
  access: { mode: 'pairing' },
  port: 0,
  plugins: { shapes: { mood: 'serious', limits: { perHour: 4 } }, gone: { enabled: false, x: 1 } },
};

describe('dashboard forms an owner can read', function () {
  this.timeout(30_000);
  let w: WebTest;
  let cookie: string;
  beforeEach(async () => {
    w = await startWebTest({ token: TOKEN, plugins: [pingPlugin, shapes, quiet] });
    await writeFile(w.configFile, JSON.stringify(OWNER_FILE, null, 4) + '\n');
    ({ cookie } = await login(w.port, TOKEN));
  });
  afterEach(() => w.stop());

  const get = async (path: string) => (await request(w.port, { path, headers: { cookie } })).body;
  const post = (path: string, fields: URLSearchParams) => request(w.port, { method: 'POST', path, headers: { cookie, ...sameOrigin(w.port) }, body: fields.toString() });
  const labelOf = (page: string, id: string) => new RegExp(`<label for="${id}"[^>]*>([\\s\\S]*?)</label>`).exec(page)?.[1]?.replace(/<[^>]+>/g, '').trim();

  it('labels options from title and description, offers unions and enums as selects, lists one per line and nested objects as fieldsets', async () => {
    const page = await get('/config/plugins');
    expect(labelOf(page, 'opt-shapes-voiceName')).to.equal('Voice of the answers');
    expect(page).to.contain('id="opt-shapes-voiceName-help">The voice spoken answers use.');
    expect(labelOf(page, 'opt-shapes-mood')).to.equal('How the bot sounds');
    // A long description is the help; the label is the key in words, never the camelCase key.
    expect(labelOf(page, 'opt-shapes-bannedWords')).to.equal('Banned words (one per line)');
    expect(labelOf(page, 'opt-shapes-quietHours')).to.equal('Quiet hours (one per line)');
    expect(page).to.match(/<select id="opt-shapes-mood" name="opt:mood"[^>]*><option value="">\(default: calm\)<\/option><option value="calm">calm<\/option><option value="cheerful">cheerful<\/option><option value="serious" selected>serious<\/option><\/select>/);
    expect(page).to.match(/<select id="opt-shapes-level" name="opt:level"[^>]*>.*<option value="3">3<\/option><\/select>/);
    expect(page).to.match(/<select id="opt-shapes-colour" name="opt:colour"[^>]*>.*<option value="blue">blue<\/option>/);
    expect(page).to.match(/<textarea id="opt-shapes-bannedWords" name="opt:bannedWords"/);
    expect(page).to.match(/<fieldset class="nested" id="opt-shapes-limits"><legend>Limits<\/legend>/);
    expect(page).to.match(/<input type="text" inputmode="decimal" id="opt-shapes-limits-perHour" name="opt:limits.perHour" value="4"/);
    // A shape the form cannot edit is shown and left to config.json, never a JSON box.
    expect(page).to.contain('Edited in config.json (plugins.shapes.aliases)');
    expect(page).not.to.contain('placeholder="JSON"').and.not.to.contain('placeholder="{}"');
    for (const key of ['bannedWords', 'quietHours', 'voiceName']) expect(page).not.to.match(new RegExp(`<label[^>]*>${key}</label>`));
    // Each plugin is a card that opens and closes (collapsed on a phone).
    expect(page).to.match(/<details class="card plugin-card" id="plugin-shapes"><summary><h3 id="h-plugin-shapes">shapes<\/h3>/);
    expect(page).to.match(/<details class="card plugin-card" id="plugin-ping">/);
  });

  it('saving one changed option on a plugin card writes only that option: defaults, the owner\'s keys and the file\'s layout stay', async () => {
    const before = await w.readConfig();
    const fields = formFields(await get('/config/plugins'), 'form-plugin-shapes');
    fields.set('opt:limits.perHour', '6');
    const res = await post('/config/plugins/save', fields);
    expect(res.status, res.body.match(/role="(alert|status)"[^>]*>([\s\S]*?)<\//)?.[2]).to.equal(303);
    const after = await w.readConfig();
    const expected = structuredClone(OWNER_FILE);
    expected.plugins.shapes.limits.perHour = 6;
    expect(after).to.equal(JSON.stringify(expected, null, 4) + '\n');
    expect(after.split('\n').filter((line, i) => line !== before.split('\n')[i])).to.deep.equal(['                "perHour": 6']);
  });

  it('reads selects, lists and switches back as their types, and refuses a bad list item by name', async () => {
    const fields = formFields(await get('/config/plugins'), 'form-plugin-shapes');
    fields.set('opt:level', '3');
    fields.set('opt:colour', 'blue');
    fields.set('opt:bannedWords', ' spam \n\nscam\n');
    fields.set('opt:quietHours', '22\n23\nmidnight');
    fields.set('opt:limits.strict', 'on');
    const bad = await post('/config/plugins/save', fields);
    expect(bad.status).to.equal(422);
    expect(bad.body, bad.body.slice(bad.body.indexOf('id="plugin-shapes"'), bad.body.indexOf('id="plugin-shapes"') + 3000)).to.match(/id="opt-shapes-quietHours-err">quietHours\.2: must be integer/);
    expect(bad.body).to.match(/<details class="card plugin-card" id="plugin-shapes" open>/);
    fields.set('opt:quietHours', '22\n23');
    fields.set('opt:mood', '');
    expect((await post('/config/plugins/save', fields)).status).to.equal(303);
    expect(JSON.parse(await w.readConfig()).plugins.shapes).to.deep.equal({ limits: { perHour: 4, strict: true }, level: 3, colour: 'blue', bannedWords: ['spam', 'scam'], quietHours: [22, 23] });
    expect(w.t.app.bot.config.plugins.shapes).to.deep.include({ level: 3, quietHours: [22, 23] });
  });

  it('saving the settings view with one changed field writes only that field', async () => {
    const before = await w.readConfig();
    const page = await get('/config');
    // What the file does not set is shown with its default, and the plugins' options are not a JSON box here.
    expect(page).to.contain('name="host" value="127.0.0.1"');
    // Every access mode is offered, so the one in the file is shown (and kept) instead of turning into "everyone".
    expect(page).to.match(/<option value="pairing" selected>pairing/);
    expect(page).not.to.match(/name="plugin:[^"]+:options"/);
    const fields = formFields(page);
    fields.set('botName', 'Helper');
    const res = await post('/config/save', fields);
    expect(res.status, res.body.match(/id="form-errors"[^>]*>([\s\S]*?)<\/div>/)?.[1]).to.equal(303);
    expect(await w.readConfig()).to.equal(before.replace('"botName": "Bot"', '"botName": "Helper"'));
  });

  it('a plugin\'s top-level section that is not text is a form too, and saves only the changed field', async () => {
    const before = await w.readConfig();
    const page = await get('/config');
    expect(page).to.match(/<fieldset class="nested" id="opt-section-quietTimes"><legend>Quiet times<\/legend>/);
    expect(labelOf(page, 'opt-section-quietTimes-from')).to.equal('Hour the quiet starts');
    expect(page).not.to.match(/<textarea[^>]*name="section:quietTimes"/);
    const fields = formFields(page);
    fields.set('opt:quietTimes.from', '30');
    const bad = await post('/config/save', fields);
    expect(bad.status).to.equal(422);
    expect(bad.body).to.contain('quietTimes.from: must be &lt;= 23');
    expect(await w.readConfig()).to.equal(before);
    fields.set('opt:quietTimes.from', '');
    fields.set('opt:quietTimes.days', 'sat\nsun');
    expect((await post('/config/save', fields)).status).to.equal(303);
    const expected = { ...structuredClone(OWNER_FILE), quietTimes: { days: ['sat', 'sun'] } };
    expect(await w.readConfig()).to.equal(JSON.stringify(expected, null, 4) + '\n');
  });
});

describe('dashboard: one date format and one size unit', () => {
  it('writes a moment as UTC to the second and a size as MB or GB with one decimal', () => {
    expect(formatTime(Date.UTC(2026, 10, 26, 15, 2, 7, 900))).to.equal('2026-11-26 15:02:07 UTC');
    expect(formatBytes(256 * 1024)).to.equal('0.3 MB');
    expect(formatBytes(1536 * 1024 * 1024)).to.equal('1.5 GB');
    expect(formatBytes(1024 ** 3 - 1)).to.equal('1,024.0 MB');
  });

  it('the status, settings and access views use them', async () => {
    // The owner's notice and the pairing reply go out at once: the pages are tested here, not the pace of sends.
    const w = await startWebTest({ token: TOKEN, plugins: [pingPlugin], config: { owners: ['62811111111'], access: { mode: 'pairing', allow: [], block: [] } }, sendPacing: UNPACED_SENDS });
    try {
      const { cookie } = await login(w.port, TOKEN);
      w.t.app.notices.raise('disk-low', 'Free space is low.');
      const since = w.t.app.bot.notices.incidents?.()[0]?.since;
      expect(since).to.be.a('number');
      const status = (await request(w.port, { path: '/config/status', headers: { cookie } })).body;
      expect(status).to.contain(`>${formatTime(since!)}</time>`);
      expect(status).to.match(/<dt>Disk<\/dt><dd>[\d,]+\.\d [MG]B free in/);
      const settings = (await request(w.port, { path: '/config', headers: { cookie } })).body;
      expect(settings).to.match(/Free space: <b>[\d,]+\.\d [MG]B<\/b>/);
      await w.t.transport.push({ text: 'hello', senderId: '62855555555@s.whatsapp.net' });
      const access = (await request(w.port, { path: '/config/access', headers: { cookie } })).body;
      expect(access).to.match(/<time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time>/);
    } finally {
      await w.stop();
    }
  });
});
