import type { GroupMetadata } from '@whiskeysockets/baileys';
import type { ChatRoutes } from './chat-routes.js';
import { GroupCache } from './group-cache.js';
import type { WhatsAppSocket } from './socket.js';

/**
 * What the bot knows of each chat beyond its messages (Baileys' groups.ts part): group metadata (cached, kept
 * current by Baileys' group events, no query per message) and each chat's disappearing-message timer, learnt from
 * what arrives, so replies inherit it (else recipients see "will not disappear"). The timers are kept in the store
 * (`ChatRoutes`), so replies after a restart still inherit them.
 *
 * @example
 * const chats = new ChatSettings(undefined, (meta) => identity.learnMembers(meta), () => routes);
 * chats.attach(socket);
 * chats.timerOf('1203@g.us') // 86400
 */
export class ChatSettings {
  readonly groups: GroupCache;

  constructor(
    groupTtlMs: number | undefined,
    onMembers: (meta: GroupMetadata) => void,
    /** Where each chat's disappearing timer (seconds) is kept, once the stores are open. */
    private readonly routes: () => ChatRoutes | undefined,
  ) {
    this.groups = new GroupCache(groupTtlMs, 5000, (meta) => {
      onMembers(meta);
      if (meta.ephemeralDuration !== undefined) this.setTimer(meta.id, meta.ephemeralDuration || 0);
    });
  }

  /** Keeps the cached group metadata current from a socket's events. */
  attach(socket: WhatsAppSocket): void {
    // Full payloads (new groups, and every group when WhatsApp marks the list dirty) are stored as they are;
    // partial ones are applied to the cached entry. No query is made here: a burst of them hit rate limits.
    socket.ev.on('groups.upsert', (groups) => this.groups.applyUpdates(groups));
    socket.ev.on('groups.update', (updates) => {
      this.groups.applyUpdates(updates);
      for (const u of updates) if (u.id && u.ephemeralDuration !== undefined) this.setTimer(u.id, u.ephemeralDuration || 0);
    });
    socket.ev.on('group-participants.update', (u) => this.groups.applyParticipants(u));
  }

  /** A group's metadata: cached, else asked for once over `socket` (none: only what is cached). */
  async metadata(jid: string, socket: WhatsAppSocket | undefined): Promise<GroupMetadata | undefined> {
    return socket ? this.groups.getOrFetch(jid, () => socket.groupMetadata(jid)) : this.groups.get(jid);
  }

  /** Baileys' `cachedGroupMetadata`: cached, else fetched once over the socket open at that moment. */
  async cached(jid: string, socket: () => WhatsAppSocket | undefined): Promise<GroupMetadata | undefined> {
    return this.groups.getOrFetch(jid, () => {
      const open = socket();
      return open ? open.groupMetadata(jid) : Promise.reject(new Error('not connected'));
    });
  }

  /** The chat's disappearing timer (seconds), when one is known. */
  timerOf(chatId: string): number | undefined {
    return this.routes()?.get(chatId)?.timer ?? this.groups.get(chatId)?.ephemeralDuration;
  }

  setTimer(chatId: string, seconds: number): void {
    this.routes()?.set(chatId, { timer: seconds });
  }

  /** Admin of a group, from its (cached) metadata; a participant may be listed by phone jid or by LID. */
  async isAdmin(chatId: string, ids: string[], socket: WhatsAppSocket | undefined): Promise<boolean> {
    const meta = await this.metadata(chatId, socket);
    if (!meta) return false;
    return meta.participants.some((p) => Boolean(p.admin) && [p.id, p.lid, p.phoneNumber].some((id) => id && ids.includes(id)));
  }
}
