import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { isLid, userPart, type PluginStore, type StoredDoc } from '../../core/index.js';
import { WORKSPACE_ID, WORKSPACE_INDEX, WORKSPACE_USERNAMES, WORKSPACE_USERS, type WorkspaceMeta } from './schemas.js';

export type { WorkspaceMeta } from './schemas.js';

/**
 * A sender id in canonical form: `<digits>@lid` or `<digits>@s.whatsapp.net` (device suffix dropped).
 * Returns undefined for ids with no user part.
 *
 * @example canonicalId('628123:7@s.whatsapp.net') // '628123@s.whatsapp.net'
 */
export function canonicalId(id: string | undefined): string | undefined {
  if (!id) return undefined;
  const user = userPart(id);
  if (!user || !/^[A-Za-z0-9._-]{1,64}$/.test(user)) return undefined;
  return isLid(id) ? `${user}@lid` : `${user}@s.whatsapp.net`;
}

/**
 * Workspaces: identity (users.json), metadata (index/), files (files/<id>/) and site usernames (usernames.json).
 * The documents are the plugin's `host.store` declarations (schemas.ts): the core writes, checks, sets aside and
 * flushes them. Everything is loaded at start and kept in memory, so the routing predicate stays synchronous.
 *
 * @example
 * const store = new WorkspaceStore(host.store, host.files.folder('workspaces'));
 * await store.load();
 * const owner = store.ownerOf('628123@s.whatsapp.net', '99887@lid');
 * const ws = store.byOwner(owner) ?? (await store.create(owner));
 */
export class WorkspaceStore {
  readonly root: string;
  private readonly users: StoredDoc<{ owners: Record<string, string> }>;
  private readonly usernames: StoredDoc<Record<string, string>>;
  private readonly metas = new Map<string, WorkspaceMeta>();
  private ownersMap: Record<string, string> = {};
  private namesMap: Record<string, string> = {};

  /** `root`: the folder of the workspaces' files (`DATA_DIR/workspaces`). */
  constructor(private readonly docs: PluginStore, root: string) {
    this.root = root;
    this.users = docs.doc(WORKSPACE_USERS);
    this.usernames = docs.doc(WORKSPACE_USERNAMES);
    // The core changes these itself on a `.mydata` delete and a chat move (schemas.ts), in the documents this class
    // holds (usernames.json and a workspace's `open` change in place): follow it.
    docs.onChange(WORKSPACE_USERS, () => void this.users.get().then((users) => (this.ownersMap = users.owners)));
    // A workspace deleted with its person is forgotten at once, so nothing of it is used or written back (the tools
    // look the workspace up at each call).
    docs.onChange(WORKSPACE_INDEX, (id, removed) => void (removed && id && this.metas.delete(id)));
  }

  get indexDir(): string {
    return path.join(this.root, 'index');
  }

  get filesRoot(): string {
    return path.join(this.root, 'files');
  }

  private index(meta: { id: string }): StoredDoc<WorkspaceMeta> {
    return this.docs.chat(meta.id).doc(WORKSPACE_INDEX) as StoredDoc<WorkspaceMeta>;
  }

  async load(): Promise<void> {
    await mkdir(this.indexDir, { recursive: true });
    await mkdir(this.filesRoot, { recursive: true, mode: 0o711 });
    this.ownersMap = (await this.users.get()).owners;
    this.namesMap = await this.usernames.get();
    for (const id of await this.docs.chats(WORKSPACE_INDEX)) {
      if (!WORKSPACE_ID.test(id)) continue;
      // A file that does not parse or match was set aside by the store (bytes kept, reported): that workspace starts anew.
      const meta = await this.index({ id }).get();
      if (!meta.owner) continue;
      meta.open ??= {};
      meta.ids ??= [meta.owner];
      this.metas.set(id, meta);
    }
  }

/**
   * The owner key of a sender, from the sender id and the alternative id the transport knows (phone ↔ LID).
   * Links both ids to one owner in users.json, so the person finds the same workspace under either id.
   */
  ownerOf(senderId: string, senderAltId?: string): string | undefined {
    const ids = [canonicalId(senderId), canonicalId(senderAltId)].filter((x): x is string => Boolean(x));
    if (!ids.length) return undefined;
    const known = ids.map((id) => this.ownersMap[id]).filter((x): x is string => Boolean(x));
    // When both ids were already used separately, the one with a workspace wins (the sender id's first).
    const owner = known.find((o) => this.byOwner(o)) ?? known[0] ?? this.recordedIn(ids)?.owner ?? ids[0];
    let changed = false;
    for (const id of ids) {
      if (this.ownersMap[id] === owner) continue;
      if (this.ownersMap[id] && this.byOwner(this.ownersMap[id])) continue; // never re-point an id that owns a workspace
      this.ownersMap[id] = owner;
      changed = true;
    }
    if (changed) {
      void this.users.update((users) => void (users.owners = this.ownersMap));
      const meta = this.byOwner(owner);
      if (meta) {
        for (const id of ids) if (!meta.ids.includes(id) && this.ownersMap[id] === owner) meta.ids.push(id);
        void this.index(meta).update(() => meta);
      }
    }
    return owner;
  }

  /** The owner key of a sender without recording anything (for synchronous checks). */
  findOwner(senderId: string, senderAltId?: string): string | undefined {
    const ids = [canonicalId(senderId), canonicalId(senderAltId)].filter((x): x is string => Boolean(x));
    const known = ids.map((id) => this.ownersMap[id]).filter((x): x is string => Boolean(x));
    return known.find((o) => this.byOwner(o)) ?? known[0] ?? this.recordedIn(ids)?.owner ?? ids[0];
  }

  /** The workspace one of these ids was recorded in (when users.json lost the link: an id moved to the phone). */
  private recordedIn(ids: string[]): WorkspaceMeta | undefined {
    for (const meta of this.metas.values()) if (ids.some((id) => meta.ids.includes(id))) return meta;
    return undefined;
  }

  byOwner(owner: string): WorkspaceMeta | undefined {
    for (const meta of this.metas.values()) if (meta.owner === owner) return meta;
    return undefined;
  }

  byId(id: string): WorkspaceMeta | undefined {
    return this.metas.get(id);
  }

  byUsername(name: string): WorkspaceMeta | undefined {
    const id = Object.hasOwn(this.namesMap, name) ? this.namesMap[name] : undefined;
    return id ? this.metas.get(id) : undefined;
  }

  /** The folder of a workspace's files. */
  dirOf(meta: WorkspaceMeta): string {
    if (!WORKSPACE_ID.test(meta.id)) throw new Error('invalid workspace id');
    return path.join(this.filesRoot, meta.id);
  }

  async create(owner: string): Promise<WorkspaceMeta> {
    const existing = this.byOwner(owner);
    if (existing) return existing;
    const meta: WorkspaceMeta = { id: randomBytes(8).toString('hex'), owner, ids: Object.keys(this.ownersMap).filter((id) => this.ownersMap[id] === owner), createdAt: Date.now(), open: {} };
    if (!meta.ids.length) meta.ids.push(owner);
    await mkdir(this.dirOf(meta), { recursive: true, mode: 0o700 });
    this.metas.set(meta.id, meta);
    await this.save(meta);
    return meta;
  }

  async save(meta: WorkspaceMeta): Promise<void> {
    await this.index(meta).save(() => meta);
  }

  /**
   * The sender's workspace if it is open in this chat and was used within `idleMs` (no writes: safe in a routing
   * predicate, which runs on every message).
   */
  openFor(senderId: string, senderAltId: string | undefined, chatId: string, idleMs: number): WorkspaceMeta | undefined {
    // Most chats have no workspace open at all: said without working out whose the sender's ids are.
    if (!this.anyOpenIn(chatId)) return undefined;
    const owner = this.findOwner(senderId, senderAltId);
    const meta = owner ? this.byOwner(owner) : undefined;
    return meta && this.isOpen(meta, chatId, idleMs) ? meta : undefined;
  }

  /** Whether any workspace was opened in `chat` and not closed (idle or not). */
  anyOpenIn(chatId: string): boolean {
    for (const meta of this.metas.values()) if (meta.open[chatId] !== undefined) return true;
    return false;
  }

  /** True when the owner's workspace is open in the chat and was used within `idleMs`. */
  isOpen(meta: WorkspaceMeta | undefined, chatId: string, idleMs: number, now = Date.now()): boolean {
    const last = meta?.open[chatId];
    return last !== undefined && now - last <= idleMs;
  }

  async setOpen(meta: WorkspaceMeta, chatId: string, open: boolean): Promise<void> {
    if (open) meta.open[chatId] = Date.now();
    else delete meta.open[chatId];
    await this.save(meta);
  }

  /** Marks activity without a disk write for every message (written with the next change). */
  touch(meta: WorkspaceMeta, chatId: string): void {
    if (meta.open[chatId] !== undefined) meta.open[chatId] = Date.now();
  }

  /** Claims a username for a workspace (releasing its previous one). Returns false when someone else holds it. */
  async claimUsername(meta: WorkspaceMeta, name: string): Promise<boolean> {
    const holder = Object.hasOwn(this.namesMap, name) ? this.namesMap[name] : undefined;
    if (holder && holder !== meta.id && this.metas.has(holder)) return false;
    if (meta.username && meta.username !== name) delete this.namesMap[meta.username];
    this.namesMap[name] = meta.id;
    meta.username = name;
    await this.usernames.save(() => this.namesMap);
    await this.save(meta);
    return true;
  }

  /** Deletes every file of a workspace and leaves an empty folder (the username stays). */
  async wipeFiles(meta: WorkspaceMeta): Promise<void> {
    const dir = this.dirOf(meta);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true, mode: 0o700 });
  }

  async flush(): Promise<void> {
    await this.docs.flush();
  }
}
