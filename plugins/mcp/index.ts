import { existsSync } from 'node:fs';
import { definePlugin, Type, type CapabilityDeclaration } from '../../core/index.js';
import { mcpConfigPath } from './config-path.js';
import type { McpServerLink } from './server-link.js';
import type { McpServers } from './servers.js';

/*
 * A start loads the MCP client (the servers' links, the MCP SDK, TypeBox's Value checking mcp.json: servers.ts) only
 * when mcp.json exists; without it the plugin is declared and offers no tools.
 */
let serversModule: Promise<typeof import('./servers.js')> | undefined;
const loadServers = () => (serversModule ??= import('./servers.js'));

/** The options in config.json `plugins.mcp`. */
export const options = Type.Object({
  startWaitMs: Type.Integer({ title: 'Start-up wait (ms)', minimum: 0, maximum: 60_000, default: 5000, description: 'how long start-up waits for the MCP servers before the bot goes on (they keep starting behind it)' }),
  restartBackoffMs: Type.Integer({ title: 'First restart wait (ms)', minimum: 10, maximum: 600_000, default: 1000, description: 'first wait before restarting a failed MCP server; doubles on each failure in a row' }),
  maxRestartBackoffMs: Type.Integer({ title: 'Longest restart wait (ms)', minimum: 10, maximum: 3_600_000, default: 300_000, description: 'longest wait between restarts' }),
});

/** The MCP client: the servers of mcp.json, kept running, their tools offered to the main model. */
export default definePlugin({
  name: 'mcp',
  description: 'Tools from the MCP servers declared in mcp.json',
  options,
  settings: [{ name: 'MCP_CONFIG', description: 'path of mcp.json (default: beside config.json)' }],
  setup: async (host) => {
    const file = mcpConfigPath(host.configFile, host.setting('MCP_CONFIG'));
    let servers: McpServers | undefined;
    // Without mcp.json nothing of the MCP client loads: no servers, no tools.
    if (existsSync(file)) servers = await (await loadServers()).startMcpServers(host, file);
    else host.log.info({ file }, `no MCP servers: ${file} does not exist`);
    const links = servers?.links ?? [];
    const status = () => statusOf(file, servers?.fileProblem, links);
    mcpStatus.current = status;
    return {
      tools: (ctx) => servers?.tools(ctx) ?? [],
      stop: async () => {
        if (mcpStatus.current === status) mcpStatus.current = undefined;
        await Promise.all(links.map((link) => link.stop()));
      },
    };
  },
  provides: [mcpCapability()],
});

/** The running plugin's status; the capability reads it (the capability is declared before setup runs). */
const mcpStatus: { current: (() => { ok: boolean; degraded?: boolean; notConfigured?: boolean; detail: string }) | undefined } = { current: undefined };

/** One line per server, for the start-log table and the dashboard's capabilities (read-only: mcp.json is the owner's). */
function statusOf(file: string, fileProblem: string | undefined, links: McpServerLink[]): { ok: boolean; degraded?: boolean; notConfigured?: boolean; detail: string } {
  if (fileProblem) return { ok: false, detail: `mcp.json is not used: ${fileProblem.replace(/\n\s*/g, ' ')}` };
  if (!links.length) return { ok: false, notConfigured: true, detail: `no MCP servers declared (${file})` };
  const parts = links.map((link) => {
    if (link.state === 'off') return `${link.name}: off`;
    if (link.state === 'up') return `${link.name}: up, ${link.tools.length} tool(s)`;
    // A restart in progress still shows why it went down: the owner sees a crash loop, not a flicker.
    if (link.state === 'starting') return link.problem ? `${link.name}: DOWN, ${link.problem}; restarting now` : `${link.name}: starting`;
    return `${link.name}: DOWN, ${link.problem ?? 'unknown'}; restart in ${link.retryInSeconds()} s`;
  });
  const up = links.filter((l) => l.state === 'up').length;
  const wanted = links.filter((l) => l.state !== 'off').length;
  return { ok: up > 0 || wanted === 0, degraded: up < wanted, detail: `${file}: ${parts.join('; ')}` };
}

function mcpCapability(): CapabilityDeclaration {
  return {
    name: 'mcp',
    detect: () => mcpStatus.current?.() ?? { ok: false, detail: 'MCP servers are not started' },
    live: () => mcpStatus.current?.() ?? { ok: false, detail: 'MCP servers are not started (the mcp plugin is off)' },
    missing: 'no MCP servers are running',
    fix: 'declare MCP servers in mcp.json beside config.json',
  };
}
