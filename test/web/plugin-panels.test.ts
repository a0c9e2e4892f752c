import { expect } from 'chai';
import { definePlugin } from '../../core/index.js';
import catchup from '../../plugins/catchup/index.js';
import { FakeModel } from '../../app/testing/fake-model.js';
import { csrfOf, login, request, sameOrigin, startWebTest, TOKEN, type WebTest } from './web-helpers.js';

const OWNER = '10000000001@s.whatsapp.net';
const FAMILY = '120363000000000077@g.us';

/** A plugin with a panel: one table (a cell that looks like markup), one empty table, an action that records its value. */
const ran: string[] = [];
let readFails = false;
const shelf = definePlugin({
  name: 'shelf',
  description: 'Keeps books (panel test)',
  setup: () => ({
    panel: {
      read: () => {
        if (readFails) throw new Error('the shelf broke');
        return [
          { caption: 'Books', columns: ['Title', 'Lent to'], rows: [['<script>alert(1)</script>', 'Ann']] },
          { caption: 'Lost books', columns: ['Title'], rows: [], empty: 'none lost' },
        ];
      },
      actions: [{ name: 'lend', label: 'Lend', field: 'a title', run: (value: string) => (ran.push(value), `Lent ${value}.`) }],
    },
  }),
});

/** Plugins' own panels on the dashboard's Plugins view (issues 53 and 55: profiles and spending, watched chats). */
describe('dashboard: plugin panels', function () {
  this.timeout(30_000);
  let w: WebTest;
  let cookie: string;
  let model: FakeModel | undefined;
  afterEach(async () => {
    await w.stop();
    await model?.close();
    model = undefined;
    ran.length = 0;
    readFails = false;
  });

  const get = async (path: string) => (await request(w.port, { path, headers: { cookie } })).body;
  const act = async (plugin: string, action: string, value: string, csrf?: string) => {
    const page = await get('/config/plugins');
    return request(w.port, { method: 'POST', path: '/config/plugins/panel', headers: { cookie, ...sameOrigin(w.port) }, body: new URLSearchParams({ _csrf: csrf ?? csrfOf(page), plugin, action, value }).toString() });
  };
  const cardOf = (page: string, name: string) => page.slice(page.indexOf(`id="plugin-${name}"`), page.indexOf('</details>', page.indexOf(`id="plugin-${name}"`)));

  it("shows a plugin's tables escaped, an empty one by its words, and runs its action with the field's value", async () => {
    w = await startWebTest({ token: TOKEN, plugins: [shelf], config: { plugins: { shelf: { enabled: true } } } });
    ({ cookie } = await login(w.port, TOKEN));
    const card = cardOf(await get('/config/plugins'), 'shelf');
    expect(card).to.contain('<caption>Books</caption>').and.contain('<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>').and.not.contain('<script>alert');
    expect(card).to.contain('<b>Lost books:</b> none lost');
    expect(card).to.match(/<label for="pa-shelf-lend">Lend: a title<\/label>/);
    const done = await act('shelf', 'lend', '  Dune  ');
    expect(done.status).to.equal(200);
    expect(done.body).to.contain('Lent Dune.');
    expect(ran).to.deep.equal(['Dune']);
    // No such action, a forged token, no session: nothing runs.
    expect((await act('shelf', 'burn', 'Dune')).status).to.equal(404);
    expect((await act('shelf', 'lend', 'Emma', 'forged')).status).to.equal(403);
    const anonymous = await request(w.port, { method: 'POST', path: '/config/plugins/panel', headers: sameOrigin(w.port), body: new URLSearchParams({ plugin: 'shelf', action: 'lend', value: 'Emma' }).toString() });
    expect(anonymous.status).to.equal(401);
    expect(ran).to.deep.equal(['Dune']);
  });

  it('a panel that fails to read says so on its card; the page and the other plugins still show', async () => {
    w = await startWebTest({ token: TOKEN, plugins: [shelf, catchup], config: { plugins: { shelf: { enabled: true }, catchup: { enabled: true } } } });
    ({ cookie } = await login(w.port, TOKEN));
    readFails = true;
    const res = await request(w.port, { path: '/config/plugins', headers: { cookie } });
    expect(res.status).to.equal(200);
    expect(cardOf(res.body, 'shelf')).to.contain('shelf could not read what it keeps just now').and.not.contain('the shelf broke');
    expect(cardOf(res.body, 'catchup')).to.contain('Watched chats (read-only):</b> no chat is watched');
  });

  it('catchup: an owner watches and unwatches a chat from the dashboard, and the table shows it', async () => {
    w = await startWebTest({ token: TOKEN, plugins: [catchup], config: { plugins: { catchup: { enabled: true } } } });
    ({ cookie } = await login(w.port, TOKEN));
    const watched = await act('catchup', 'watch', FAMILY);
    expect(watched.body).to.contain(`Watching ${FAMILY} from now on`);
    const card = cardOf(await get('/config/plugins'), 'catchup');
    expect(card).to.match(new RegExp(`<tr><td>${FAMILY}</td><td>${FAMILY}</td><td>\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d</td></tr>`));
    expect((await act('catchup', 'unwatch', FAMILY)).body).to.contain(`Stopped watching ${FAMILY}`);
    expect(cardOf(await get('/config/plugins'), 'catchup')).to.contain('no chat is watched');
  });

  it("profiles: the chats' profiles and this month's spending per chat, person and model", async () => {
    model = await FakeModel.start();
    w = await startWebTest({ token: TOKEN, env: { BASE_URL: model.url, MODEL: 'priced-model' }, config: { owners: ['10000000001'], money: { prices: { 'priced-model': { input: 1000000, output: 1000000 } } } } });
    ({ cookie } = await login(w.port, TOKEN));
    expect(cardOf(await get('/config/plugins'), 'profiles')).to.contain('no chat has a profile').and.contain('nothing spent yet this month');
    await w.t.send({ senderId: OWNER, text: '.profile length short' });
    await w.t.send({ senderId: OWNER, text: 'hello there' });
    const card = cardOf(await get('/config/plugins'), 'profiles');
    expect(card).to.match(new RegExp(`<tr><td>${OWNER}</td><td>each provider&#39;s own</td><td>all switched on</td><td>short</td><td>none</td><td>${OWNER}</td></tr>`));
    expect(card).to.match(/<caption>Spending per chat in \d{4}-\d\d \(UTC\)<\/caption>/);
    // One answer of 1 input and 1 output token at 1,000,000 per million each: $2.00, in every breakdown.
    for (const who of ['all chats', OWNER, '+10000000001', 'priced-model']) expect(card).to.contain(`<tr><td>${who}</td><td>$2.00</td><td>1</td><td>1</td><td>0</td><td>1</td></tr>`);
  });
});
