import { pluginFiles } from '../../../core/kernel/bot/plugin-files.js';
import { PluginStores } from '../../../core/services/store/plugin-store.js';
import { WORKSPACE_STORES } from '../../../plugins/workspace/schemas.js';
import { expect } from 'chai';
import sinon from 'sinon';
import { Capabilities } from '../../../core/kernel/capabilities/capabilities.js';
import workspacePlugin from '../../../plugins/workspace/index.js';
import { Value } from '@sinclair/typebox/value';
import { workspaceOptions } from '../../../plugins/workspace/options.js';
import { WorkspaceService, type WorkspaceHost } from '../../../plugins/workspace/service.js';
import { systemPython } from '../../../plugins/workspace/sandbox.js';
import { tempDir } from '../../helpers/checkout.js';
import { putFile, startWorkspaceApp, texts, USER } from './helpers.js';

describe('workspace without a sandbox', function () {
  this.timeout(30_000);

  it('edits files but refuses to run code, saying why', async () => {
    const t = await startWorkspaceApp();
    try {
      t.app.capabilities.setLive('sandbox', () => ({ ok: false, detail: 'bubblewrap unavailable: bwrap not found' }));
      const open = texts(await t.transport.push({ text: '/ws', senderId: USER }))[0];
      expect(open).to.match(/Python: I cannot run code here: the sandbox does not work on this server \(bubblewrap unavailable: bwrap not found\)/);
      expect(open).to.include('You can still create and edit files');
      const run = texts(await t.transport.push({ text: '/ws run main.py', senderId: USER }))[0];
      expect(run).to.match(/cannot run code here/);
    } finally {
      await t.stop();
    }
  });

  it('says the runtime is unavailable without python', async () => {
    const t = await startWorkspaceApp();
    try {
      t.app.capabilities.setLive('python', () => ({ ok: false, detail: 'python3 not found' }));
      const service = new WorkspaceService(t.app.bot.host('workspace') as unknown as WorkspaceHost);
      (service as unknown as { pythonPath: undefined }).pythonPath = undefined;
      expect(service.runtime()).to.deep.equal({ ok: false, reason: 'The python runtime is unavailable on this bot: python3 not found. You can still create and edit files.' });
    } finally {
      await t.stop();
    }
  });

  it('with the owner opt-in, logs a loud danger warning at start and runs unsandboxed with a clean environment', async function () {
    // Needs python3 under /usr (installed by .ci/run): the only python a run can use.
    if (!systemPython()) this.skip();
    const caps = new Capabilities();
    caps.define('sandbox', () => ({ ok: false, detail: 'bubblewrap unavailable: bwrap not found' }));
    caps.define('python', () => ({ ok: true, detail: 'Python 3' }));
    await caps.detectAll();
    const log = { info: sinon.spy(), warn: sinon.spy(), error: sinon.spy(), debug: sinon.spy(), child: () => log };
    const dataDir = await tempDir();
    const host = {
      name: 'workspace',
      settings: { publicBaseUrl: '', sitePort: undefined },
      config: () => ({ prefix: '.', host: '127.0.0.1' }),
      // As the core delivers them: validated, with the defaults filled in.
      options: () => ({ ...Value.Create(workspaceOptions), timeLimitSeconds: 5 }),
      setting: (name: string) => ({ WORKSPACE_UNSAFE_NO_SANDBOX: 'true' })[name],
      files: pluginFiles(dataDir, 'workspace'),
      // What the core hands every plugin: its declared stores (plugins/workspace/schemas.ts).
      store: new PluginStores('workspace', dataDir, WORKSPACE_STORES),
      // The effect guard, where the plugin declares what its commands do (no command runs here).
      effects: { declare: () => undefined },
      log,
      capabilities: caps,
      serveSite: () => undefined,
    } as unknown as WorkspaceHost;
    const offer = (await workspacePlugin.setup!(host as never)) as { stop?(): Promise<void> };
    await offer.stop?.();
    expect(log.error.calledWithMatch(sinon.match(/DANGER: WORKSPACE_UNSAFE_NO_SANDBOX is true/))).to.equal(true);

    const service = new WorkspaceService(host);
    await service.start();
    expect(service.runtime()).to.include({ ok: true, sandboxed: false });
    const meta = await service.store.create('62800000001@s.whatsapp.net');
    process.env.WORKSPACE_TEST_SECRET = 'must-not-leak';
    try {
      await putFile(service.store.dirOf(meta), 'env.py', 'import os\nprint(sorted(os.environ))');
      const reply = await service.run(meta, 'env.py');
      expect(reply).to.include('UNSANDBOXED');
      expect(reply).not.to.include('WORKSPACE_TEST_SECRET');
    } finally {
      delete process.env.WORKSPACE_TEST_SECRET;
    }
  });
});
