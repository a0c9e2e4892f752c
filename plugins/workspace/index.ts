import type { PluginHost } from '../../core/plugin/types.js';
import { definePlugin } from '../../core/plugin/define-plugin.js';
import { handleCommand, handleWorkspaceChat } from './commands.js';
import { ENV_SETTINGS, MOVED_TO_ENV, optionsSchema } from './options.js';
import { workspacePrivacy } from './privacy.js';
import { WorkspaceService } from './service.js';
import { siteMiddleware, startSiteServer } from './site.js';

/** One service per running bot (tests start several bots in one process). */
const services = new WeakMap<PluginHost, WorkspaceService>();
const siteServers = new Set<{ close(): Promise<void> }>();
const started = new Set<WorkspaceService>();

/**
 * `/ws`: a personal coding workspace per user, python runs in a bubblewrap sandbox, and a one-page site per
 * workspace served at `PUBLIC_BASE_URL/<username>/`.
 */
export default definePlugin({
  name: 'workspace',
  description: 'Your own coding workspace: files, sandboxed python, a one-page website',
  order: 50,
  optionsSchema,
  settings: ENV_SETTINGS,
  movedToEnv: MOVED_TO_ENV,
  triggers: [
    { literal: '/ws', help: 'open your coding workspace (files, python, your own web page)', usage: '/ws [files|show <file>|run <file.py>|name <username>|reset|exit]' },
    {
      // While a user's workspace is open in this chat, their free text goes to the model with the workspace tools.
      // Commands of other plugins (prefix or /word) still reach their plugins.
      when: (ctx) => {
        const service = services.get(ctx.host);
        if (!service || !ctx.text || ctx.text.startsWith(ctx.host.config().prefix) || /^\/\w/.test(ctx.text)) return false;
        return Boolean(service.openWorkspace(ctx.senderId, ctx.message.senderAltId, ctx.chatId));
      },
    },
  ],
  handle: async (ctx) => {
    const service = services.get(ctx.host);
    if (!service) {
      await ctx.reply('The workspace is not ready yet; please try again in a moment.');
      return;
    }
    if (ctx.command) await handleCommand(service, ctx);
    else await handleWorkspaceChat(service, ctx);
  },
  routes: (router, host) => {
    // With SITE_PORT set, sites live only on their own port (their own origin, away from the dashboard).
    const site = siteMiddleware(() => (host.settings.sitePort === undefined ? services.get(host)?.store : undefined));
    router.get(['/:site', '/:site/{*rest}'], site);
  },
  start: async (host) => {
    const service = new WorkspaceService(host);
    await service.start();
    services.set(host, service);
    started.add(service);
    host.privacy?.register(workspacePrivacy(() => service.store));
    const options = service.options();
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
    const jail = (host.jail as PluginHost['jail'] | undefined)?.support;
    if (jail?.dropsRoot) host.log.info({ uid: jail.uid, gid: jail.gid }, 'workspace: the service runs as root; code runs in the jail as an unprivileged uid (JAIL_UID)');
    if (!service.runtime().ok) host.log.warn({ reason: service.runtime() }, 'workspace: python runs are unavailable');
    if (host.settings.sitePort !== undefined) {
      const hostRules = {
        bindHost: host.config().host,
        publicBaseUrl: host.settings.publicBaseUrl,
        extraHosts: (host.settings.env.WEB_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim()).filter(Boolean),
      };
      const server = await startSiteServer(() => service.store, host.settings.sitePort, host.config().host, (err) => host.log.error({ err }, 'site request failed'), hostRules);
      siteServers.add(server);
      host.log.info({ port: server.port }, `workspace sites served on port ${server.port} (SITE_PORT)`);
    }
  },
  stop: async () => {
    const closing = [...siteServers].map((s) => s.close());
    siteServers.clear();
    const flushing = [...started].map((s) => s.store.flush());
    started.clear();
    await Promise.all([...closing, ...flushing]);
  },
});
