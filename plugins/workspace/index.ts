import { definePlugin, type PluginHost } from '../../core/index.js';
import { declareCommandEffects, handleCommand, handleWorkspaceChat } from './commands.js';
import { ENV_SETTINGS, MOVED_TO_ENV, workspaceOptions } from './options.js';
import { WorkspaceService, type WorkspaceHost } from './service.js';
import { siteMiddleware } from './site.js';
import { WORKSPACE_STORES } from './schemas.js';

const NO_PUBLIC_URL = 'PUBLIC_BASE_URL is not set: workspace sites have no public address';

/** Start-log lines about how code will run: the owner must hear at once when it runs without a sandbox. */
function logRuntime(host: WorkspaceHost, service: WorkspaceService): void {
  const sandbox = host.capabilities.status('sandbox');
  if (service.options().unsafeNoSandbox) {
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
  if (!service.runtime().ok) host.log.warn({ reason: service.runtime() }, 'workspace: python runs are unavailable');
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
    // One service per running bot (tests start several bots in one process).
    const service = new WorkspaceService(host);
    await service.start();
    logRuntime(host, service);
    declareCommandEffects(service, host.effects);
    // Served through the web server and its guards: on the main server, or on SITE_PORT alone when it is set.
    host.serveSite({ label: 'workspace sites', handler: siteMiddleware(() => service.store) });
    return {
      literals: [
        {
          literal: '/ws',
          help: 'open your coding workspace (files, python, your own web page)',
          usage: '/ws [files|show <file>|run <file.py>|name <username>|reset|exit]',
          run: (ctx) => handleCommand(service, ctx),
        },
      ],
      predicates: [
        {
          // While a user's workspace is open in this chat, their free text goes to the model with the workspace tools.
          // Commands of other plugins (prefix or /word) still reach their plugins.
          when: (ctx) => {
            if (!ctx.text || ctx.text.startsWith(ctx.host.config().prefix) || /^\/\w/.test(ctx.text)) return false;
            return Boolean(service.openWorkspace(ctx.senderId, ctx.message.senderAltId, ctx.chatId));
          },
          run: (ctx) => handleWorkspaceChat(service, ctx),
        },
      ],
    };
  },
});
