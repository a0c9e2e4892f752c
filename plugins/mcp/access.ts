import { inIdList, type MessageContext } from '../../core/index.js';
import type { McpServerEntry } from './mcp-config.js';

/**
 * Whether a server's tools are offered for this message. Groups only when the entry says `groups: true` (another
 * member's text must not steer them); `access`: "owners" (default), "everyone", or a list of ids (owners always).
 */
export function offeredFor(entry: McpServerEntry, ctx: MessageContext<any>): boolean {
  if (ctx.message.isGroup && !entry.groups) return false;
  if (entry.access === 'everyone' || ctx.isOwner) return true;
  if (entry.access === 'owners') return false;
  return [ctx.senderId, ctx.message.senderAltId].some((id) => inIdList(id, entry.access as string[]));
}
