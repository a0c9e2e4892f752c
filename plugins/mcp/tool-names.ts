/** The longest tool name the chat APIs accept, and the characters they allow. */
export const MAX_TOOL_NAME = 64;

/**
 * The name a server's tool is offered under: `<server>__<tool>`, other characters turned to `_`, cut to 64.
 *
 * @example offeredName('home assistant', 'lights.on') // 'home_assistant__lights_on'
 */
export function offeredName(server: string, tool: string): string {
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_');
  return `${clean(server)}__${clean(tool)}`.slice(0, MAX_TOOL_NAME);
}
