import { definePlugin, type PluginHost, type SiteHandler } from '../../core/index.js';
import { atFirstUse } from '../../core/builtin.js';
import { ENV_SETTINGS, MOVED_TO_ENV, RESET_EFFECT, withEnvSettings, workspaceOptions, type WorkspaceOptions } from './options.js';
import { pythonRuntime, systemPython, type Runtime } from './python-runtime.js';
import { WORKSPACE_STORES } from './schemas.js';
import type { WorkspaceHost } from './service.js';
import { WorkspaceStore } from './store.js';

const NO_PUBLIC_URL = 'PUBLIC_BASE_URL is not set: workspace sites have no public address';

/*
 * A start loads only what declaring the plugin, its start log, its routing predicate and its sites' lookup need: the
 * commands, tools, file access and sandbox (handling.ts) load with the first /ws or open-workspace message, the site
 * server (site.ts) with the first request for a claimed site name.
 */

/** Start-log lines about how code will run: the owner must hear at once when it runs without a sandbox. */
function logRuntime(host: WorkspaceHost, options: WorkspaceOptions, runtime: Runtime): void {
  const sandbox = host.capabilities.status('sandbox');
  if (options.unsafeNoSandbox) {
    if (sandbox.ok) {
      host.log.warn('WORKSPACE_UNSAFE_NO_SANDBOX is set but bubblewrap works, so code still runs sandboxed; remove the setting');
    } else {
      host.log.error(
        '!!! DANGER: WORKSPACE_UNSAFE_NO_SANDBOX is true and bubblewrap does not work: chat users\' python code runs WITHOUT A SANDBOX, ' +
          'with network access and the service\'s file permissions (it can read .env, config.json and data/session_auth). Install bubblewrap and unset WORKSPACE_UNSAFE_NO_SANDBOX. !!!',
      );
    }
  } else if (!sandbox.ok) {
    host.log.warn({ detail: sandbox.detail }, 'workspace: no working sandbox, so /ws can edit files but refuses to run code');
  }
  const jail = host.jail?.support;
  if (jail?.dropsRoot) host.log.info({ uid: jail.uid, gid: jail.gid }, 'workspace: the service runs as root; code runs in the jail as an unprivileged uid (JAIL_UID)');
  if (!runtime.ok) host.log.warn({ reason: runtime }, 'workspace: python runs are unavailable');
}

/**
 * `/ws`: a personal coding workspace per user, python runs in a bubblewrap sandbox, and a one-page site per
 * workspace served at `PUBLIC_BASE_URL/<username>/`.
 */
export default definePlugin({
  name: 'workspace',
  description: 'Your own coding workspace: files, sandboxed python, a one-page website',
  order: 50,
  options: workspaceOptions,
  // The plugin owns `publicUrl`: without PUBLIC_BASE_URL its sites have no public address.
  provides: [
    {
      name: 'publicUrl',
      detect: (host: PluginHost<unknown>) => (host.settings.publicBaseUrl ? { ok: true, detail: host.settings.publicBaseUrl } : { ok: false, notConfigured: true, detail: NO_PUBLIC_URL }),
      missing: NO_PUBLIC_URL,
      fix: 'set PUBLIC_BASE_URL in .env (the address the web server is reached at)',
    },
  ],
  settings: ENV_SETTINGS,
  movedToEnv: MOVED_TO_ENV,
  stores: WORKSPACE_STORES,
  setup: async (host) => {
    // One store and one service per running bot (tests start several bots in one process). The store is loaded at
    // start: the routing predicate and the sites read it synchronously.
    const store = new WorkspaceStore(host.store, host.files.folder('workspaces'));
    await store.load();
    const pythonPath = systemPython();
    const options = () => withEnvSettings(host.options(), (name) => host.setting(name));
    logRuntime(host, options(), pythonRuntime(host.capabilities, pythonPath, options()));
    // Once per running plugin; a failed load is the handler's error (reply and log), and the next use tries again.
    const handlers = atFirstUse(async () => {
      const handling = await import('./handling.js');
      return { handling, service: new handling.WorkspaceService(host, { store, pythonPath }) };
    });
    host.effects.declare(RESET_EFFECT, 'deleteFiles', async (data: { owner: string }) => {
      const { handling, service } = await handlers();
      return handling.resetWorkspace(service, data);
    });
    // Served through the web server and its guards: on the main server, or on SITE_PORT alone when it is set. A path
    // whose first part is no claimed site name falls through without loading the site server.
    const siteServer = atFirstUse(async () => (await import('./site.js')).siteMiddleware(() => store));
    const sites: SiteHandler = async (ctx, next) => {
      const name = /^\/([^/]+)/.exec(ctx.path)?.[1];
      if (!name || !store.byUsername(name)) return next();
      return (await siteServer())(ctx, next);
    };
    host.serveSite({ label: 'workspace sites', handler: sites });
    return {
      literals: [
        {
          literal: '/ws',
          help: 'open your coding workspace (files, python, your own web page)',
          usage: '/ws [files|show <file>|run <file.py>|name <username>|reset|exit]',
          run: async (ctx) => {
            const { handling, service } = await handlers();
            return handling.handleCommand(service, ctx);
          },
        },
      ],
      predicates: [
        {
          // While a user's workspace is open in this chat, their free text goes to the model with the workspace tools.
          // Commands of other plugins (prefix or /word) still reach their plugins.
          when: (ctx) => {
            if (!ctx.text || ctx.text.startsWith(ctx.host.config().prefix) || /^\/\w/.test(ctx.text)) return false;
            // Most chats have no workspace open at all: said before reading the options.
            return store.anyOpenIn(ctx.chatId) && Boolean(store.openFor(ctx.senderId, ctx.message.senderAltId, ctx.chatId, host.options().idleMinutes * 60_000));
          },
          run: async (ctx) => {
            const { handling, service } = await handlers();
            return handling.handleWorkspaceChat(service, ctx);
          },
        },
      ],
    };
  },
});
