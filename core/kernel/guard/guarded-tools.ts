import type { MessageContext, Tool } from '../plugin/message-context.js';
import { toolArgProblems } from '../plugin/tool-args.js';
import type { EffectGuard } from './effect-guard.js';
import { EFFECT_KINDS, type Actor, type EffectKind } from './policy.js';

/** The core's own effect names for held tool calls, one per kind (`tool-publish`, …). */
export const heldToolEffect = (kind: EffectKind): string => `tool-${kind}`;

const wrapped = new WeakMap<Tool, Tool>();

/** What a tool call would do, in words for the owner. */
function summaryOf(tool: Tool, args: unknown): string {
  const shown = JSON.stringify(args ?? {});
  return `${tool.name} ${shown.length > 300 ? `${shown.slice(0, 300)}…` : shown}`;
}

/**
 * `tool` behind the guard when it declares an effect kind (`effects.kind`): each call asks the guard first — allowed,
 * it runs as it is; denied, the model is told why; held, the owner is asked and the model told it waits for them.
 * A tool without a kind is returned as it is.
 */
export function guardedTool(tool: Tool, guard: EffectGuard): Tool {
  const kind = tool.effects?.kind;
  if (!kind || !EFFECT_KINDS.includes(kind)) return tool;
  let guarded = wrapped.get(tool);
  if (guarded) return guarded;
  guarded = {
    ...tool,
    run: async (args, call) => {
      const actor: Actor = { id: call.senderId, isOwner: call.isOwner };
      const summary = summaryOf(tool, args);
      const decision = guard.guard({ kind, summary }, actor, call.chatId);
      if (decision.verdict === 'allow') return tool.run(args, call);
      if (decision.verdict === 'deny') return `Refused: ${tool.name} was not run: ${decision.reason}. Tell the user.`;
      const held = await guard.hold('core', { effect: heldToolEffect(kind), summary, data: { tool: tool.name, args } }, { senderId: call.senderId, chatId: call.chatId, isOwner: call.isOwner });
      return `Held: ${tool.name} waits for the owner's OK (${held.id}); it runs when they approve. Tell the user so; do not call it again.`;
    },
  };
  wrapped.set(tool, guarded);
  return guarded;
}

/**
 * Runs a held tool call the owner approved: as its person in its chat, only when that tool is still offered to them
 * there (`toolsOf` gives the tools of such a turn), with its arguments checked again.
 */
export async function runHeldTool(data: { tool: string; args: Record<string, unknown> }, ctx: MessageContext, toolsOf: (ctx: MessageContext) => Tool[]): Promise<string> {
  const tool = toolsOf(ctx).find((t) => t.name === data.tool);
  if (!tool) throw new Error(`${data.tool} is not offered to them there any more`);
  const args = { ...data.args };
  const problems = toolArgProblems(tool, args);
  if (problems?.length) throw new Error(`its arguments no longer fit: ${problems.join('; ')}`);
  const result = await tool.run(args, { chatId: ctx.chatId, senderId: ctx.senderId, senderAltId: ctx.message.senderAltId, isOwner: ctx.isOwner, ctx, cite: () => undefined });
  const text = typeof result === 'string' ? result : JSON.stringify(result ?? null);
  return `✅ Done: ${data.tool}: ${text.length > 500 ? `${text.slice(0, 500)}…` : text}`;
}
