import type { Access, BotConfig } from '../../services/config/schema.js';
import { userPart } from '../port/ids.js';

/**
 * The user parts of a config id list (owners, block, allow, a plugin's access list), made once per list: asked for
 * every message, and config lists are replaced, never changed in place, when the config changes.
 */
const listUsers = new WeakMap<readonly string[], Set<string>>();
function inConfigList(id: string, list: readonly string[]): boolean {
  if (!list.length) return false;
  let users = listUsers.get(list);
  if (!users) {
    users = new Set(list.map(userPart).filter(Boolean));
    listUsers.set(list, users);
  }
  const user = userPart(id);
  return user !== '' && users.has(user);
}

/** The sender's ids (phone jid and LID when both are known). */
export function senderIds(message: { senderId: string; senderAltId?: string }): string[] {
  return message.senderAltId ? [message.senderId, message.senderAltId] : [message.senderId];
}

/** True when the message's sender is an owner: listed in config.json, or the person at the machine (console). */
export function isOwnerMessage(message: { senderId: string; senderAltId?: string; fromOperator?: boolean }, config: BotConfig): boolean {
  return message.fromOperator === true || isOwnerId(senderIds(message), config);
}

/** True when any of the sender's ids is an owner in config.json. */
export function isOwnerId(ids: string[], config: BotConfig): boolean {
  return ids.some((id) => inConfigList(id, config.owners));
}

/** True when one of the sender's ids is on config.json's block list (it always wins). */
export function isBlocked(ids: string[], config: BotConfig): boolean {
  return ids.some((id) => inConfigList(id, config.access.block));
}

/**
 * Whether config.json alone lets this sender in: the block list always wins; `everyone` lets anyone in; `owners`
 * only owners; `allowList` and `pairing` owners and the allow list (core/access adds the senders an owner approved
 * and holds strangers' messages for pairing).
 */
export function botAnswers(ids: string[], config: BotConfig): boolean {
  if (isBlocked(ids, config)) return false;
  const mode = config.access.mode;
  if (mode === 'everyone') return true;
  if (isOwnerId(ids, config)) return true;
  return mode !== 'owners' && ids.some((id) => inConfigList(id, config.access.allow));
}

/**
 * Whether a sender may use a plugin under its `access` setting: `everyone` (default), `owners`, or a list of ids
 * (owners are always allowed).
 */
export function mayUse(access: Access | undefined, sender: { senderId: string; senderAltId?: string; fromOperator?: boolean }, config: BotConfig): boolean {
  // Asked per plugin on every message; most plugins are open to everyone, so the id list is made only when needed.
  if (access === undefined || access === 'everyone') return true;
  if (sender.fromOperator === true) return true;
  const ids = senderIds(sender);
  if (isOwnerId(ids, config)) return true;
  if (access === 'owners') return false;
  return ids.some((id) => inConfigList(id, access));
}
