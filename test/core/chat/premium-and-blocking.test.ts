import { expect } from 'chai';
import { premiumRequest } from '../../../core/kernel/chat/premium-request.js';
import pingPlugin from '../../../plugins/ping/index.js';
import premiumPlugin from '../../../plugins/premium/index.js';
import { completion, FakeGateway } from '../../fakes/openai-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

describe('premium phrases are whole words', () => {
  it('is not a request when the words only appear inside other words or sentences', () => {
    for (const text of ['the premium plan costs more', 'reuse the premium model for tests?', 'we use the premiums of last year', 'is the premium model pleasant', 'kapakai premium']) {
      expect(premiumRequest(text).premium, text).to.equal(false);
    }
    expect(premiumRequest('Use the premium model: explain tides')).to.deep.equal({ premium: true, text: 'explain tides' });
    expect(premiumRequest('explain tides, premium model please')).to.deep.equal({ premium: true, text: 'explain tides' });
    // The phrase is cut where it stands as words, not inside an earlier word.
    expect(premiumRequest('reuse the premium model? use the premium model: why').text).to.match(/^reuse the premium model\? .*why$/);
  });

  it('answers "the premium plan costs more" with the normal model', async () => {
    const gw = await FakeGateway.start('gw');
    const t = await startTestBot([premiumPlugin], { env: { API_KEY: 'gateway-key-123456', BASE_URL: gw.url, MODEL: 'main-m', PREMIUM_MODEL: 'premium-m' } });
    try {
      gw.next({ status: 200, json: completion('noted') });
      await t.transport.push({ text: 'the premium plan costs more' });
      gw.next({ status: 200, json: completion('tides') });
      await t.transport.push({ text: 'use the premium model: explain tides' });
      expect(gw.chats().map((r) => r.json.model)).to.deep.equal(['main-m', 'premium-m']);
    } finally {
      await t.stop();
      await gw.close();
    }
  });
});

describe('a blocked number stays blocked under its LID', () => {
  let t: TestBot;
  before(async () => {
    t = await startTestBot([pingPlugin], { config: { access: { mode: 'everyone', allow: [], block: ['62855555555'] } } });
  });
  after(async () => t.stop());

  it('ignores a message whose sender id is a LID and whose alternate id is the blocked phone number', async () => {
    expect(await t.transport.push({ text: '.ping', senderId: '201234567890123@lid', senderAltId: '62855555555@s.whatsapp.net' })).to.deep.equal([]);
    expect(await t.transport.push({ text: '.ping', chatId: '120363000000000011@g.us', senderId: '201234567890123@lid', senderAltId: '62855555555@s.whatsapp.net', mentions: [] })).to.deep.equal([]);
  });

  it('ignores the blocked phone number written as the main id with a LID as the alternate', async () => {
    expect(await t.transport.push({ text: '.ping', senderId: '62855555555@s.whatsapp.net', senderAltId: '201234567890123@lid' })).to.deep.equal([]);
  });

  it('still answers another LID', async () => {
    expect(await t.transport.push({ text: '.ping', senderId: '209999999999999@lid', senderAltId: '62866666666@s.whatsapp.net' })).to.have.length(1);
  });
});
