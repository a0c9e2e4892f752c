import path from 'node:path';

/** mcp.json's path: MCP_CONFIG when set (relative to config.json's folder), else beside config.json. */
export function mcpConfigPath(configFile: string, override: string | undefined): string {
  const dir = path.dirname(configFile);
  return override?.trim() ? path.resolve(dir, override.trim()) : path.join(dir, 'mcp.json');
}
