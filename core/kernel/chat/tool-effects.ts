import type { Tool } from '../plugin/message-context.js';
import { UNDECLARED_EFFECTS, type ToolEffects } from '../plugin/tool-effects.js';

const ACTS: ReadonlyArray<ToolEffects['acts']> = ['nothing', 'ownFiles', 'chats'];

/** A tool's declared effects; none, or a malformed declaration, counts as the unsafe side (`UNDECLARED_EFFECTS`). */
export function effectsOf(tool: Tool): ToolEffects {
  const e = tool.effects;
  if (!e || typeof e !== 'object' || typeof e.outsideText !== 'boolean' || !ACTS.includes(e.acts)) return UNDECLARED_EFFECTS;
  return e;
}

/**
 * The core's rule for one turn: a turn holding a tool that reads or changes someone's own files (`acts: 'ownFiles'`)
 * holds no tool that brings in outside text (past messages, transcripts, web pages, MCP answers) and none that acts
 * on chats (schedules, sends, writes the chat's memory) — a planted instruction could otherwise make the model delete
 * the person's files or post them where others read. Those tools are left out of such a turn (`left` names them); a
 * turn without such a tool keeps its list as it is (the same array).
 */
export function keepOwnFilesApart(tools: Tool[]): { tools: Tool[]; left: string[] } {
  if (!tools.some((t) => effectsOf(t).acts === 'ownFiles')) return { tools, left: [] };
  const kept: Tool[] = [];
  const left: string[] = [];
  for (const tool of tools) {
    const e = effectsOf(tool);
    if (e.outsideText || e.acts === 'chats') left.push(tool.name);
    else kept.push(tool);
  }
  return { tools: kept, left };
}
