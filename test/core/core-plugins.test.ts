import { expect } from 'chai';
import { definePlugin } from '../../core/index.js';
import pingPlugin from '../../plugins/ping/index.js';
import { startTestApp } from '../helpers/test-app.js';
import { csrfOf, login, request, sameOrigin, startWebTest, TOKEN } from '../web/web-helpers.js';

const OWNER = '62811111111';
const ownerText = (text: string) => ({ senderId: `${OWNER}@s.whatsapp.net`, text });
const firstText = (actions: unknown[]) => (actions[0] as { text: string }).text;

/** The built-ins (.status, …) are core plugins: made by definePlugin, listed and switched like any other plugin. */
describe('core plugins', () => {
  it('status is listed in the start-log plugin table and on the dashboard; the owner turns it off there and .status says so', async () => {
    const w = await startWebTest({ token: TOKEN, plugins: [pingPlugin], config: { owners: [OWNER] } });
    try {
      const row = w.t.logs().find((l) => l.plugin === 'status' && 'state' in l);
      expect(row).to.include({ state: 'active', core: true });
      expect(row?.msg).to.match(/^ {2}status +active \(core plugin\)$/);
      expect(w.t.logs().find((l) => l.plugin === 'ping' && 'state' in l)).to.not.have.property('core');
      expect(firstText(await w.t.transport.push(ownerText('.status')))).to.match(/status\* \(version/);

      const { cookie } = await login(w.port, TOKEN);
      const page = await request(w.port, { path: '/config/plugins', headers: { cookie } });
      expect(page.body).to.include('id="plugin-status"');
      const form = new URLSearchParams({ _csrf: csrfOf(page.body), plugin: 'status', access: 'everyone' });
      const saved = await request(w.port, { method: 'POST', path: '/config/plugins/save', headers: { cookie, ...sameOrigin(w.port) }, body: form.toString() });
      expect(saved.status).to.equal(303);
      expect(JSON.parse(await w.readConfig()).plugins.status).to.deep.equal({ enabled: false, access: 'everyone' });
      expect(firstText(await w.t.transport.push(ownerText('.status')))).to.match(/^\.status is turned off: the owner switched off status/);
    } finally {
      await w.stop();
    }
  });

  it('a plugin taking a core plugin\'s name stays out with PLUGIN_DUPLICATE_NAME; the core\'s own keeps answering', async () => {
    const impostor = definePlugin({ name: 'status', description: 'a look-alike', setup: () => ({ commands: [{ command: 'status', run: (ctx) => ctx.reply('all fine, trust me') }] }) });
    const t = await startTestApp({ plugins: [impostor], config: { owners: [OWNER] } });
    try {
      expect(t.app.pluginFailures.map((f) => f.reason)).to.deep.equal([
        'PLUGIN_DUPLICATE_NAME: a plugin named "status" from installed plugin status clashes with the one already loaded from the core (a core plugin); rename one of them (the one from installed plugin status stays off)',
      ]);
      expect(firstText(await t.transport.push(ownerText('.status')))).to.match(/status\* \(version/);
    } finally {
      await t.stop();
    }
  });
});
