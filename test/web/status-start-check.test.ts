import { expect } from 'chai';
import pingPlugin from '../../plugins/ping/index.js';
import { completion, failures, FakeGateway } from '../fakes/openai-gateway.js';
import { FakeSearchProvider } from '../fakes/search-provider.js';
import type { RecordedRequest } from '../../app/testing/http-fake.js';
import { startTestBot, type TestBot } from '../../app/testing/index.js';
import { startWebServer, type WebServer } from '../../web/server.js';
import { login, openStream, request, TOKEN } from './web-helpers.js';

const GOOD_KEY = 'sk-good-key-123456';
const WRONG_KEY = 'sk-wrong-key-999999';
const SEARCH_KEY = 'tvly-wrong-key-123456';
const MODEL = 'known-model';

/** The part of `page` from `start` up to the end of its section. */
function sectionOf(page: string, start: string): string {
  const from = page.indexOf(start);
  expect(from, `${start} in the page`).to.be.greaterThan(-1);
  return page.slice(from, page.indexOf('</section>', from));
}

/** The list item of one upstream in the status view's AI providers. */
const itemOf = (html: string, name: string) => {
  const from = html.indexOf(`data-leg="${name}"`);
  expect(from, `${name} listed`).to.be.greaterThan(-1);
  return html.slice(from, html.indexOf('</li>', from));
};

/**
 * The dashboard's status view lists each provider leg with what the start check found and the setting to fix, beside
 * the leg (not only among the last warnings), live as well; never a key. Real HTTP against loopback fake upstreams,
 * one of which rejects its key.
 */
describe('dashboard status view: each leg with its start check and fix (loopback gateways, real HTTP)', function () {
  this.timeout(30_000);
  let t: TestBot | undefined;
  let web: WebServer | undefined;
  const closing: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await web?.close();
    await t?.stop();
    for (const c of closing.splice(0)) await c.close();
    web = undefined;
    t = undefined;
  });

  it('shows ✘ and the fix for the leg whose key the gateway rejected and for the search key, ✔ for the good leg', async () => {
    // Gateways that check the start probe's key as a real one does: 401 for any key but the good one.
    const strict = (gw: FakeGateway) => gw.answerProbe((req: RecordedRequest) => (req.headers.authorization === `Bearer ${GOOD_KEY}` ? { status: 200, json: completion('O', { model: MODEL }) } : failures.badKey));
    const primary = strict(await FakeGateway.start('primary'));
    const second = strict(await FakeGateway.start('second'));
    const search = await FakeSearchProvider.start();
    search.http.probeAnswers.set('POST /search', { status: 401, json: { error: 'bad key' } });
    closing.push(primary, second, search);
    t = await startTestBot(pingPlugin, {
      env: { PRIMARY_GATEWAY_API_KEY: WRONG_KEY, PRIMARY_GATEWAY_BASE_URL: primary.url, PRIMARY_GATEWAY_MODEL: MODEL, API_KEY: GOOD_KEY, BASE_URL: second.url, MODEL, SEARCH_API_KEY: SEARCH_KEY, SEARCH_BASE_URL: search.url, CONFIG_TOKEN: TOKEN },
      config: { port: 0 },
      healthProbe: true,
    });
    web = await startWebServer(t.app, () => t?.transport);
    await t.app.healthChecked;
    expect(primary.probes()).to.have.length(1);

    const { cookie } = await login(web.port, TOKEN);
    const page = (await request(web.port, { path: '/config/status', headers: { cookie } })).body;
    const providers = sectionOf(page, 'id="ai-providers"');
    const bad = itemOf(providers, 'primary');
    expect(bad).to.include('data-state="rejected"').and.include('data-start-check="failed"');
    expect(bad).to.include('start check ✘ the gateway rejected the key (HTTP 401)').and.include('fix: correct PRIMARY_GATEWAY_API_KEY in .env (npm run setup)');
    const good = itemOf(providers, 'second');
    expect(good).to.include('data-start-check="ok"').and.include(`start check ✔ key accepted, model ${MODEL} answered`).and.not.include('fix:');
    const searchItem = itemOf(providers, 'search');
    expect(searchItem).to.include('data-start-check="failed"').and.include('the search provider rejected the key (HTTP 401)').and.include('fix: correct SEARCH_API_KEY in .env (npm run setup)');

    // The same list is a live region: the view's event stream carries it as rendered on the page.
    const live = await openStream(web.port, '/config/events?view=status', cookie);
    try {
      await live.waitFor('event: regions');
      await live.waitFor('\n\n');
      const data = /event: regions\ndata: (.*)\n/.exec(live.text())?.[1];
      const regions = JSON.parse(data ?? '{}') as Record<string, string>;
      expect(itemOf(regions.legs ?? '', 'primary')).to.include('fix: correct PRIMARY_GATEWAY_API_KEY in .env (npm run setup)');
    } finally {
      live.close();
    }
    for (const key of [WRONG_KEY, GOOD_KEY, SEARCH_KEY]) expect(page).to.not.include(key);
  });
});
