import { jidDecode, WAJIDDomains } from '@whiskeysockets/baileys';

/** A file of the session folder with its last change. */
export interface KeyFileAge {
  name: string;
  mtimeMs: number;
}

/**
 * The end of the file name of the account's own sender key in any group (`sender-key-<group>--<user>--<device>.json`),
 * for one of its ids (`<phone>:<device>@s.whatsapp.net` or `<lid>:<device>@lid`), named as Baileys names it
 * (`jidToSignalProtocolAddress`: a LID's user carries `_1`).
 */
function ownSenderKeyEnding(jid: string): string | undefined {
  const decoded = jidDecode(jid);
  if (!decoded?.user) return undefined;
  const user = decoded.domainType !== WAJIDDomains.WHATSAPP ? `${decoded.user}_${decoded.domainType}` : decoded.user;
  // The key's id is `<group>::<user>::<device>`; its file name has `-` for each `:` (see keyFileName).
  return `--${user}--${decoded.device ?? 0}.json`;
}

/**
 * Which session and sender-key files to delete because nothing used them for `maxAgeMs` (they only grow otherwise;
 * Signal renegotiates them when needed). Session files and other members' sender keys go on their own. The account's
 * own sender key of a group and that group's `sender-key-memory` (the devices that already received that key) go
 * together or not at all: a memory kept without its key makes Baileys start a new key and send it to nobody, so the
 * bot's next message in the group is unreadable for every member.
 *
 * @example
 * staleKeyFiles(files, ['4915100000001:7@s.whatsapp.net', '200000000001:7@lid'], 30 * 86_400_000, Date.now());
 */
export function staleKeyFiles(files: KeyFileAge[], ownIds: Array<string | undefined>, maxAgeMs: number, now: number): string[] {
  const endings = ownIds.map((id) => (id ? ownSenderKeyEnding(id) : undefined)).filter((e): e is string => !!e);
  const stale = (f: KeyFileAge) => now - f.mtimeMs >= maxAgeMs;
  const remove: string[] = [];
  // Per group (as it appears in file names): its memory and the account's own sender keys, pruned as one.
  const groups = new Map<string, KeyFileAge[]>();
  const addToGroup = (group: string, file: KeyFileAge) => groups.set(group, [...(groups.get(group) ?? []), file]);
  for (const file of files) {
    const memory = /^sender-key-memory-(.+)\.json$/.exec(file.name);
    if (memory) {
      addToGroup(memory[1]!, file);
      continue;
    }
    if (file.name.startsWith('sender-key-') && file.name.endsWith('.json')) {
      const ending = endings.find((e) => file.name.endsWith(e) && file.name.length > 'sender-key-'.length + e.length);
      if (ending) {
        addToGroup(file.name.slice('sender-key-'.length, -ending.length), file);
        continue;
      }
    } else if (!/^session-.+\.json$/.test(file.name)) continue;
    if (stale(file)) remove.push(file.name);
  }
  for (const unit of groups.values()) if (unit.every(stale)) remove.push(...unit.map((f) => f.name));
  return remove;
}
