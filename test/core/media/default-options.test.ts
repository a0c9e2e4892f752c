import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import type { IncomingMedia } from '../../../core/index.js';
import { createMp3Plugin } from '../../../plugins/mp3/index.js';
import visionPlugin from '../../../plugins/vision/index.js';
import { FakeAnthropicGateway, imageOf } from '../../fakes/anthropic-messages.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeImage, mediaOf } from '../../plugins/vision/images.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const USER = '10000000001@s.whatsapp.net';
const MB = 1024 * 1024;
const texts = (actions: Array<{ type: string }>) => actions.filter((a) => a.type === 'text').map((a) => (a as unknown as { text: string }).text);

/**
 * Contract v2 delivers a plugin's options validated and with its declared defaults even when config.json has no
 * section for the plugin at all: the limits users meet are the documented defaults, not "no limit" or a crash.
 */
describe('mp3 and vision with no config.json section: handlers get the default options', function () {
  this.timeout(30_000);
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('mp3: recordings up to 60 minutes and files up to 200 MB are taken, longer or larger ones are refused up front', async () => {
    t = await startTestBot(createMp3Plugin(), { enableGiven: false });
    expect(t.app.config.plugins.mp3).to.equal(undefined);
    let downloads = 0;
    const quoted = (id: string, extra: Partial<IncomingMedia>) => ({
      id,
      senderId: USER,
      text: '',
      fromBot: false,
      media: { kind: 'video' as const, mimetype: 'video/mp4', download: async () => (downloads++, Promise.reject(new Error('expired'))), ...extra },
    });

    const tooLong = await t.transport.push({ text: '.mp3', quoted: quoted('q1', { seconds: 3601 }) });
    expect(texts(tooLong)).to.deep.equal(['That recording is 1 h 0 min long; I only handle up to 1 h 0 min.']);
    const tooBig = await t.transport.push({ text: '.mp3', quoted: quoted('q2', { seconds: 10, size: 200 * MB + 1 }) });
    expect(texts(tooBig)).to.deep.equal(['That file is 200 MB; I only fetch up to 200 MB.']);
    expect(downloads).to.equal(0);

    // At the limits the job starts (and fails on the expired media, which is what reaching the download proves).
    const atLimits = await t.transport.push({ text: '.mp3', quoted: quoted('q3', { seconds: 3600, size: 200 * MB }) });
    expect(texts(atLimits)[0]).to.equal('Converting to MP3…');
    expect(downloads).to.equal(1);
  });

  describe('vision', () => {
    let gateway: FakeAnthropicGateway;
    let dir: string;
    let redPng: string;
    before(async () => {
      dir = await tempDir('vision-defaults-');
      redPng = await makeImage(dir, 'red.png', 'color=c=red:s=64x48');
    });
    after(() => rm(dir, { recursive: true, force: true }));
    beforeEach(async () => (gateway = await FakeAnthropicGateway.start('gw')));
    afterEach(() => gateway.close());

    it('a photo without a caption asks the default question with the default answer length, and the 30 MB download limit holds', async () => {
      t = await startTestBot(visionPlugin, { env: { API_KEY: 'gw-key-abcdef', BASE_URL: gateway.url, MODEL: 'gw-main' }, enableGiven: false });
      expect(t.app.config.plugins.vision).to.equal(undefined);

      const answered = await t.transport.push({ text: '', media: await mediaOf(redPng) });
      expect(texts(answered)).to.deep.equal(['gw sees: What is in this image? Describe it briefly.']);
      const [req] = gateway.messages();
      expect(imageOf(req).question).to.equal('What is in this image? Describe it briefly.');
      expect(req.json.max_tokens).to.equal(1024);
      expect(req.headers['anthropic-version']).to.equal('2023-06-01');

      const atLimit = { ...(await mediaOf(redPng)), size: 30_000_000 };
      expect(texts(await t.transport.push({ text: 'and this?', media: atLimit }))).to.deep.equal(['gw sees: and this?']);
      const tooBig = { ...(await mediaOf(redPng)), size: 30_000_001 };
      expect(texts(await t.transport.push({ text: 'and this?', media: tooBig }))).to.deep.equal(['That image is too large for me (30.0 MB). Please send a smaller one.']);
      expect(gateway.messages()).to.have.length(2);
    });
  });
});
