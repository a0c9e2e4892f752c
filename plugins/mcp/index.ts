import { definePlugin, Type, type CapabilityDeclaration, type Tool } from '../../core/index.js';
import { offeredFor } from './access.js';
import { loadMcpConfig, mcpConfigPath, McpConfigError } from './mcp-config.js';
import { McpServerLink } from './server-link.js';
import { offeredName } from './tool-names.js';

/** An MCP server's JSON schema of a tool's arguments, as the tool's TypeBox parameters (the core checks calls with it). */
const serverSchema = (schema: object | undefined) => Type.Unsafe<Record<string, unknown>>(schema ?? { type: 'object', properties: {} });
type McpTool = Tool<ReturnType<typeof serverSchema>>;

const options = Type.Object({
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
    const links: McpServerLink[] = [];
    let fileProblem: string | undefined;
    // Offered name → [server, tool]; rebuilt whenever a server's tool list changes. Clashes are logged once each.
    let offered = new Map<string, { link: McpServerLink; tool: McpServerLink['tools'][number] }>();
    const clashesLogged = new Set<string>();
    const rebuild = () => {
      const next = new Map<string, { link: McpServerLink; tool: McpServerLink['tools'][number] }>();
      for (const link of links) {
        for (const tool of link.tools) {
          const name = offeredName(link.name, tool.name);
          const first = next.get(name);
          if (first) {
            const key = `${name}|${link.name}|${tool.name}`;
            if (!clashesLogged.has(key)) {
              clashesLogged.add(key);
              host.log.warn({ server: link.name, tool: tool.name, offeredAs: name, taken: `${first.link.name}/${first.tool.name}` }, `MCP tool "${tool.name}" of "${link.name}" is refused: its name ${name} is already "${first.tool.name}" of "${first.link.name}"`);
            }
            continue;
          }
          next.set(name, { link, tool });
        }
      }
      offered = next;
    };

    try {
      const entries = await loadMcpConfig(file);
      if (!entries) host.log.info({ file }, `no MCP servers: ${file} does not exist`);
      const { restartBackoffMs, maxRestartBackoffMs } = host.options();
      for (const entry of entries ?? []) {
        links.push(new McpServerLink(entry, host.log.child({ part: 'mcp' }), { backoffMs: restartBackoffMs, maxBackoffMs: Math.max(restartBackoffMs, maxRestartBackoffMs) }, rebuild));
      }
    } catch (err) {
      // A bad mcp.json never stops the bot: the plugin offers no tools and says why (start log, dashboard).
      fileProblem = err instanceof McpConfigError ? err.message : `${file} could not be read: ${(err as Error).message}`;
      host.log.error({ file }, `MCP servers are off: ${fileProblem}`);
    }
    const firstStarts = Promise.all(links.map((link) => link.start()));
    await Promise.race([firstStarts, new Promise((resolve) => setTimeout(resolve, host.options().startWaitMs).unref())]);

    const tools = (ctx: Parameters<typeof offeredFor>[1]): McpTool[] => {
      const list: McpTool[] = [];
      for (const [name, { link, tool }] of offered) {
        if (link.state !== 'up' || !offeredFor(link.entry, ctx)) continue;
        list.push({
          name,
          description: link.hide(`[MCP server "${link.name}"] ${tool.description ?? tool.title ?? tool.name}`).slice(0, 1024),
          // The server's own JSON schema: the core checks the model's arguments against it before the call.
          parameters: serverSchema(tool.inputSchema),
          // A server may fetch anything and do anything: its answers are outside text, and it may act beyond the chat.
          effects: { outsideText: true, acts: 'chats', kind: 'mcpTool' },
          // Checked again at call time: the access rules hold even if the list was built for someone else.
          run: (args, call) => (offeredFor(link.entry, call.ctx) ? link.call(tool.name, args) : `The MCP server "${link.name}" is not available to you here.`),
        });
      }
      return list;
    };
    const status = () => statusOf(file, fileProblem, links);
    mcpStatus.current = status;
    return {
      tools,
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
