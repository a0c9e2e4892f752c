import type { Capabilities } from '../capabilities/capabilities.js';
import type { BotConfig } from '../../services/config/schema.js';
import type { AccessControl } from '../access/access-control.js';
import type { PluginRegistry } from '../plugin/registry.js';
import type { MessageContext } from '../plugin/message-context.js';
import type { Transport } from '../port/transport.js';
import { chatRules, whoIsAnswered } from './access-gate.js';
import { compose } from './compose.js';
import { addressedOnly, observers } from './filters.js';
import { pluginRouting } from './plugin-routing.js';
import { markTakenUpRead } from './read-receipt.js';
import { progressSlotOf } from './context.js';
import { turnProgress, type PacedSend } from './progress.js';
import { unclaimed } from './unclaimed.js';
import { liveLocationUpdates } from './live-location.js';

/**
 * A message's path through the kernel, top-down; each step is a file of this folder.
 *
 * Before this pipeline (Bot.handle → Bot.process):
 *   1. entry      bursts.ts: a sender's quick lines of free text are one turn; chat-queue.ts: one chat in order,
 *                 chats in parallel; the owner typing on the phone goes to core/kernel/access instead.
 *   2. filters    filters.ts `handledText`: empty and binary messages stop here; context.ts builds the message's context.
 * This pipeline (Koa-style middleware, in this order):
 *   3. access     access-gate.ts `whoIsAnswered`: the block list, owners, `access.mode` (pairing codes for strangers).
 *   4. access     access-gate.ts `chatRules`: chats the owner paused or took over, a group's `.activation`.
 *   5. observers  filters.ts `observers`: plugins that see every message, addressed or not, of a chat the bot takes
 *                 part in (after the chat rules: a chat it does not take part in costs nothing and keeps nothing).
 *   6. filters    filters.ts `addressedOnly`: in groups only mentions and replies to the bot; too long is refused;
 *                 live-location.ts: a live location is answered once, its further updates are not.
 *   7. read       read-receipt.ts: the message is marked read once the bot takes it up.
 *   7b. progress  progress.ts: the optional 👀/✅/❌ reactions, and a status message for a turn that runs long.
 *   8. match+run  plugin-routing.ts with match.ts: the first handler whose trigger matches, in plugin order — the
 *                 core plugins too (core-plugins/): `status` (order 20), then the others' (100), then `help` (1000:
 *                 `.help`, turned-off and unknown commands), then `chat` (1001: free text → the model).
 *   9. unclaimed  unclaimed.ts: what no plugin took (a media alone, a bare mention, text while `chat` is off).
 */
export interface MessagePathDeps {
  config: () => BotConfig;
  access: AccessControl;
  registry: PluginRegistry;
  capabilities: Capabilities;
  transport: () => Transport | undefined;
  /** A message's context as one plugin sees it. */
  view: (ctx: MessageContext, name: string) => MessageContext;
  /** True while the fallback to the model (the `chat` core plugin) is on. */
  answersFreeText: () => boolean;
  /** A long turn's status message goes out at the pace of the bot's own messages (the outbox). */
  paced: PacedSend;
  /** Work a turn leaves running after it ends (its status message's last edit), for `Bot.idle()`. */
  after: (work: Promise<void>) => void;
}

/** Steps 3 to 9 above, composed. */
export function messagePath(deps: MessagePathDeps): (ctx: MessageContext) => Promise<void> {
  const { config, access, registry, capabilities, view } = deps;
  return compose([
    whoIsAnswered(config, access, () => deps.transport()?.ownIds() ?? []),
    chatRules(config, access),
    observers(registry, capabilities, view),
    addressedOnly(config),
    liveLocationUpdates(),
    markTakenUpRead(deps.transport),
    turnProgress({ config, transport: deps.transport, paced: deps.paced, slotOf: progressSlotOf, after: deps.after }),
    pluginRouting({ registry, capabilities, config, view }),
    unclaimed(config, deps.answersFreeText),
  ]);
}
