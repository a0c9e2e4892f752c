import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Value } from '#typebox/value';
import { Type, type Static } from '../../core/index.js';

/**
 * `mcp.json`: the MCP servers the owner declared, in the format MCP hosts share. It names commands that will run,
 * so it is read from the machine only (beside config.json, or MCP_CONFIG) and never written by the bot.
 */
const ServerEntry = Type.Object({
  command: Type.Optional(Type.String({ minLength: 1 })),
  args: Type.Optional(Type.Array(Type.String())),
  env: Type.Optional(Type.Record(Type.String(), Type.String())),
  cwd: Type.Optional(Type.String()),
  url: Type.Optional(Type.String({ pattern: '^https?://' })),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  enabled: Type.Optional(Type.Boolean()),
  access: Type.Optional(Type.Union([Type.Literal('owners'), Type.Literal('everyone'), Type.Array(Type.String())])),
  groups: Type.Optional(Type.Boolean()),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
  startTimeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
});
const McpFile = Type.Object({ mcpServers: Type.Record(Type.String(), ServerEntry) });

/** One server as the plugin runs it: the entry with defaults filled in. */
export interface McpServerEntry extends Static<typeof ServerEntry> {
  name: string;
  enabled: boolean;
  access: 'owners' | 'everyone' | string[];
  groups: boolean;
  timeoutMs: number;
  startTimeoutMs: number;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
/** Starting (npx may download the server first) and listing its tools. */
export const DEFAULT_START_TIMEOUT_MS = 60_000;

/** Thrown for an mcp.json that cannot be used; the message names the file and the field. */
export class McpConfigError extends Error {}

export { mcpConfigPath } from './config-path.js';

/** `/mcpServers/a b/args/0` → `mcpServers["a b"].args[0]`, the way an owner finds it in the file. */
function fieldName(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((out, part) => (/^\d+$/.test(part) ? `${out}[${part}]` : /^[A-Za-z_$][\w$]*$/.test(part) ? (out ? `${out}.${part}` : part) : `${out}[${JSON.stringify(part)}]`), '');
}

/**
 * Reads and checks mcp.json. No file means no servers (undefined); a file that is not JSON or does not fit throws
 * McpConfigError naming the file and every bad field.
 */
export async function loadMcpConfig(file: string): Promise<McpServerEntry[] | undefined> {
  if (!existsSync(file)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new McpConfigError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
  const problems = [...Value.Errors(McpFile, raw)].map((e) => `${fieldName(e.path) || '(the whole file)'}: ${e.message.toLowerCase()}`);
  const servers = (raw as { mcpServers?: unknown })?.mcpServers;
  if (servers && typeof servers === 'object') {
    for (const [name, entry] of Object.entries(servers as Record<string, Static<typeof ServerEntry>>)) {
      if (!entry || typeof entry !== 'object') continue;
      const at = fieldName(`/mcpServers/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`);
      if (!entry.command && !entry.url) problems.push(`${at}: needs "command" (a program run over stdio) or "url" (streamable HTTP)`);
      if (entry.command && entry.url) problems.push(`${at}: has both "command" and "url"; keep one`);
    }
  }
  if (problems.length) throw new McpConfigError(`${file} is invalid:\n  - ${[...new Set(problems)].join('\n  - ')}`);
  return Object.entries((raw as Static<typeof McpFile>).mcpServers).map(([name, entry]) => ({
    ...entry,
    name,
    enabled: entry.enabled ?? true,
    access: entry.access ?? 'owners',
    groups: entry.groups ?? false,
    timeoutMs: entry.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    startTimeoutMs: entry.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
  }));
}
