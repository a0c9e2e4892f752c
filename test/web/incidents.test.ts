import { expect } from 'chai';
import pingPlugin from '../../plugins/ping/index.js';
import { login, request, startWebTest, TOKEN, type WebTest } from './web-helpers.js';

const OWNER = '6281200000001';

describe('dashboard: link incidents are shown where they can arrive', () => {
  let w: WebTest;
  let cookie: string;
  beforeEach(async () => {
    // Owner notices go through the outbox, which otherwise waits a random 0–1.5 s (jitter) before each send.
    w = await startWebTest({ token: TOKEN, plugins: [pingPlugin], config: { owners: [OWNER], sending: { perChatPerMinute: 60, globalPerMinute: 600, jitterMs: 0 } } });
    ({ cookie } = await login(w.port, TOKEN));
  });
  afterEach(() => w.stop());

  const incidentItem = async (key: string) => {
    const page = await request(w.port, { path: '/config/status', headers: { cookie } });
    expect(page.status).to.equal(200);
    return new RegExp(`<li data-incident="${key}">([\\s\\S]*?)</li>`).exec(page.body)?.[1];
  };
  const ownerTexts = () => w.t.transport.actions.filter((a) => a.type === 'text').map((a) => (a.type === 'text' ? `${a.chatId} ${a.text}` : ''));

  it('a logout is on the status view at once, while the owners’ chat notice waits for the link and then says it is late', async () => {
    w.t.app.notices.raise('logged-out', 'WhatsApp logged the bot out: scan the new QR.', { linkDown: true });
    const item = await incidentItem('logged-out');
    expect(item).to.contain('active').and.contain('WhatsApp logged the bot out').and.contain('marked late, once the link is back');
    // A notice handed to the sender would be out once nothing waits there.
    await w.t.app.outbox.settle(10_000);
    expect(ownerTexts()).to.deep.equal([]);

    w.t.app.notices.recover('logged-out', 'WhatsApp is linked again.');
    await w.t.until(() => ownerTexts().length);
    expect(ownerTexts()).to.have.length(1);
    expect(ownerTexts()[0]).to.match(new RegExp(`^${OWNER}@s\\.whatsapp\\.net ⚠️ Late notice \\(from \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC, when WhatsApp could not carry it\\): WhatsApp logged the bot out: scan the new QR\\.\\n✅ WhatsApp is linked again\\.$`));
    const over = await incidentItem('logged-out');
    expect(over).to.contain('over').and.not.contain('>active<');
  });

  it('"None since start" is not shown while WhatsApp is not connected', async () => {
    const section = async () => /<section id="incidents"[\s\S]*?<\/section>/.exec((await request(w.port, { path: '/config/status', headers: { cookie } })).body)?.[0] ?? '(no incidents section)';
    expect(await section()).to.contain('None since start');
    await w.t.transport.relink();
    const unlinked = await section();
    expect(unlinked).to.not.contain('None since start');
    expect(unlinked).to.contain('WhatsApp is not connected (see WhatsApp above); no other incident since start.');
  });

  it('an ordinary incident is on the status view too, and told at once', async () => {
    expect((await request(w.port, { path: '/config/status', headers: { cookie } })).body).to.match(/id="incidents"[\s\S]*None since start/);
    w.t.app.notices.raise('disk-low', 'Free space is below 200 MB.');
    expect(await incidentItem('disk-low')).to.contain('active').and.not.contain('marked late');
    await w.t.until(() => ownerTexts().length);
    expect(ownerTexts()).to.deep.equal([`${OWNER}@s.whatsapp.net ⚠️ Free space is below 200 MB.`]);
  });
});
