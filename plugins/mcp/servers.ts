import { Type, type PluginHost, type Static, type Tool } from '../../core/index.js';
import { offeredFor } from './access.js';
import type { options } from './index.js';
import { loadMcpConfig, McpConfigError } from './mcp-config.js';
import { McpServerLink } from './server-link.js';
import { offeredName } from './tool-names.js';

/*
 * Running the servers of mcp.json and offering their tools: index.ts loads this module at start only when mcp.json
 * exists (with it the MCP SDK and TypeBox's Value, which checks the file).
 */

/** An MCP server's JSON schema of a tool's arguments, as the tool's TypeBox parameters (the core checks calls with it). */
const serverSchema = (schema: object | undefined) => Type.Unsafe<Record<string, unknown>>(schema ?? { type: 'object', properties: {} });
type McpTool = Tool<ReturnType<typeof serverSchema>>;

/** The servers started from mcp.json, the tools they offer to a message, and why the file is not used (if it is not). */
export interface McpServers {
  links: McpServerLink[];
  fileProblem: string | undefined;
  tools(ctx: Parameters<typeof offeredFor>[1]): McpTool[];
}

/**
 * Reads mcp.json (`file`), starts its servers and waits for them up to `startWaitMs` (they keep starting behind it).
 * A bad file never stops the bot: no servers, and `fileProblem` says why (logged here).
 *
 * @example const servers = await startMcpServers(host, '/srv/bot/mcp.json');
 */
export async function startMcpServers(host: PluginHost<Static<typeof options>>, file: string): Promise<McpServers> {
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
  return { links, fileProblem, tools };
}
