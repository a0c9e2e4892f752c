import type { BaileysEventMap, GroupMetadata, GroupParticipant } from '@whiskeysockets/baileys';

export const DEFAULT_GROUP_TTL_MS = 6 * 60 * 60_000;

/**
 * Group metadata (participants, addressing mode, disappearing timer) for Baileys' `cachedGroupMetadata`, so a
 * group send costs no metadata query. Every fetch is stored (Baileys itself does not store what it fetches on a
 * miss); Baileys' events keep entries current without queries: `groups.upsert` and full `groups.update` payloads
 * (what Baileys emits for every group when WhatsApp marks the list dirty) replace an entry, partial updates and
 * `group-participants.update` are applied to it. Concurrent misses of one group share one query.
 *
 * @example
 * const groups = new GroupCache();
 * makeWASocket({ cachedGroupMetadata: (jid) => groups.getOrFetch(jid, () => sock.groupMetadata(jid)) });
 */
export class GroupCache {
  private readonly entries = new Map<string, { meta: GroupMetadata; until: number }>();
  private readonly inflight = new Map<string, Promise<GroupMetadata | undefined>>();
  /** Number of metadata queries made (tests, metrics). */
  queries = 0;

  constructor(
    private readonly ttlMs = DEFAULT_GROUP_TTL_MS,
    private readonly maxEntries = 5000,
    private readonly onStored: (meta: GroupMetadata) => void = () => undefined,
    private readonly now: () => number = () => Date.now(),
  ) {}

  get(jid: string): GroupMetadata | undefined {
    const entry = this.entries.get(jid);
    if (!entry) return undefined;
    if (entry.until <= this.now()) {
      this.entries.delete(jid);
      return undefined;
    }
    return entry.meta;
  }

  set(meta: GroupMetadata): void {
    if (!meta?.id || !Array.isArray(meta.participants)) return;
    this.entries.delete(meta.id);
    this.entries.set(meta.id, { meta, until: this.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.onStored(meta);
  }

  delete(jid: string): void {
    this.entries.delete(jid);
  }

  /** The cached metadata, else one shared query whose result is stored; undefined when the query fails. */
  async getOrFetch(jid: string, query: () => Promise<GroupMetadata>): Promise<GroupMetadata | undefined> {
    const cached = this.get(jid);
    if (cached) return cached;
    let pending = this.inflight.get(jid);
    if (!pending) {
      this.queries++;
      pending = query()
        .then((meta) => {
          this.set(meta);
          return meta;
        })
        .catch(() => undefined)
        .finally(() => this.inflight.delete(jid));
      this.inflight.set(jid, pending);
    }
    return pending;
  }

  /** `groups.upsert` / `groups.update`: full payloads replace, partial ones are merged into a cached entry. */
  applyUpdates(updates: Array<Partial<GroupMetadata>>): void {
    for (const update of updates) {
      if (!update?.id) continue;
      if (Array.isArray(update.participants) && update.subject !== undefined) {
        this.set({ ...(this.get(update.id) ?? {}), ...update } as GroupMetadata);
        continue;
      }
      const cached = this.get(update.id);
      if (!cached) continue;
      const defined = Object.fromEntries(Object.entries(update).filter(([, v]) => v !== undefined));
      this.set({ ...cached, ...defined } as GroupMetadata);
    }
  }

  /** `group-participants.update`: applies the change to a cached participant list. */
  applyParticipants(event: BaileysEventMap['group-participants.update']): void {
    const cached = this.get(event.id);
    if (!cached) return;
    const changed = (event.participants ?? []).map((p) => (typeof p === 'string' ? ({ id: p } as GroupParticipant) : p));
    const same = (a: GroupParticipant, b: GroupParticipant) => a.id === b.id || (Boolean(a.lid) && a.lid === b.id) || (Boolean(b.lid) && b.lid === a.id);
    let participants = [...cached.participants];
    switch (event.action) {
      case 'add':
        participants = [...participants.filter((p) => !changed.some((c) => same(p, c))), ...changed.map((c) => ({ ...c, admin: null }))];
        break;
      case 'remove':
        participants = participants.filter((p) => !changed.some((c) => same(p, c)));
        break;
      case 'promote':
      case 'demote':
        participants = participants.map((p) => (changed.some((c) => same(p, c)) ? { ...p, admin: event.action === 'promote' ? 'admin' : null } : p));
        break;
      default:
        // 'modify' (a member changed number): the old entry is wrong, fetch once on next use.
        this.delete(event.id);
        return;
    }
    this.set({ ...cached, participants, size: participants.length });
  }
}
