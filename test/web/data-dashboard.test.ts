import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { csrfOf, login, request, sameOrigin, startWebTest, TOKEN, type WebTest } from './web-helpers.js';
import { storeDatabaseText, storedHistory } from '../helpers/disk-text.js';

describe('dashboard: data folder health and owners\' privacy controls', function () {
  this.timeout(20000);
  let w: WebTest;
  beforeEach(async () => {
    w = await startWebTest({ token: TOKEN });
  });
  afterEach(() => w.stop());

  const post = (cookie: string, csrf: string, fields: Record<string, string>) =>
    request(w.port, { method: 'POST', path: '/config/mydata', headers: { cookie, ...sameOrigin(w.port) }, body: new URLSearchParams({ _csrf: csrf, ...fields }).toString() });

  it('lists set-aside data files and the free space', async () => {
    const file = path.join(w.t.dir, 'data', 'history', '10000000055@s.whatsapp.net.json');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '[null, 7]');
    await w.t.transport.push({ senderId: '10000000055@s.whatsapp.net', text: 'hello' });
    const { page } = await login(w.port, TOKEN);
    expect(page).to.include('Data files set aside').and.include(file);
    expect(page).to.match(/id="free-space"[^>]*>Free space: <b>[\d,]+\.\d [MG]B<\/b>/);
  });

  it('exports and (only when confirmed) deletes what is kept about one person', async () => {
    const person = '10000000077@s.whatsapp.net';
    await w.t.transport.push({ senderId: person, text: 'my secret plan is tulips' });
    await w.t.app.bot.memories.remember(person, 'grows tulips', person);
    const { cookie, page } = await login(w.port, TOKEN);
    const csrf = csrfOf(page);
    const exported = await post(cookie, csrf, { person: '10000000077', action: 'export' });
    expect(exported.status).to.equal(200);
    expect(exported.headers['content-disposition']).to.include('attachment');
    expect(exported.body).to.include('my secret plan is tulips').and.include('grows tulips');

    const unconfirmed = await post(cookie, csrf, { person: '10000000077', action: 'delete', confirm: '' });
    expect(unconfirmed.status).to.equal(422);
    expect((await post(cookie, csrf, { person: '10000000077', action: 'export' })).body).to.include('grows tulips');

    const deleted = await post(cookie, csrf, { person: '10000000077', action: 'delete', confirm: '10000000077' });
    expect(deleted.status).to.equal(200);
    expect(deleted.body).to.include('was deleted');
    await w.t.app.bot.histories.flush();
    expect(JSON.stringify(storedHistory(path.join(w.t.dir, 'data'), person))).to.not.include('tulips');
    expect(await storeDatabaseText(path.join(w.t.dir, 'data'))).to.not.include('tulips');
  });

  it('refuses the privacy form without the session\'s CSRF token', async () => {
    const { cookie } = await login(w.port, TOKEN);
    const res = await post(cookie, 'wrong', { person: '10000000077', action: 'export' });
    expect(res.status).to.equal(403);
  });
});
