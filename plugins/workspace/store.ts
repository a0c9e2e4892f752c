import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { isLid, userPart } from '../../core/index.js';
import { checkDocument, healthFor, JsonFile, writeJsonAtomic } from '../../core/storage.js';
import { WORKSPACE_INDEX_SCHEMA, WORKSPACE_USERNAMES_SCHEMA, WORKSPACE_USERS_SCHEMA } from './schemas.js';

/** One workspace's metadata (data/workspaces/index/<id>.json). */
export interface WorkspaceMeta {
  id: string;
  /** The owner key: the first id the person was seen under (phone jid or LID). */
  owner: string;
  /** Every id of the owner seen so far (phone jid and LID). */
  ids: string[];
  createdAt: number;
  username?: string;
  /** Chats the workspace is open in, with the time of the last activity there. */
  open: Record<string, number>;
}

/** users.json: every known id (phone jid or LID) → owner key; a phone and its LID point to the same owner. */
interface UsersFile {
  owners: Record<string, string>;
}

/** usernames.json: site username → workspace id. */
type UsernamesFile = Record<string, string>;

const WORKSPACE_ID = /^[a-f0-9]{16}$/;

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
 * Workspaces on disk: identity (users.json), metadata (index/), files (files/<id>/) and site usernames
 * (usernames.json). Everything is loaded at start and kept in memory, so the routing predicate stays synchronous;
 * every change is written atomically.
 *
 * @example
 * const store = new WorkspaceStore('data');
 * await store.load();
 * const owner = store.ownerOf('628123@s.whatsapp.net', '99887@lid');
 * const ws = store.byOwner(owner) ?? (await store.create(owner));
 */
export class WorkspaceStore {
  readonly root: string;
  private readonly users: JsonFile<UsersFile>;
  private readonly usernames: JsonFile<UsernamesFile>;
  private readonly metas = new Map<string, WorkspaceMeta>();
  private ownersMap: Record<string, string> = {};
  private namesMap: UsernamesFile = {};

  constructor(dataDir: string, private readonly onProblem: (msg: string, detail: Record<string, unknown>) => void = () => undefined) {
    this.root = path.join(dataDir, 'workspaces');
    const corrupt = (file: string, movedTo: string, err: Error) => this.onProblem('workspace file was corrupt: moved aside', { file, movedTo, reason: err.message });
    this.users = new JsonFile(path.join(this.root, 'users.json'), () => ({ owners: {} }), { schema: WORKSPACE_USERS_SCHEMA, onCorrupt: corrupt });
    this.usernames = new JsonFile(path.join(this.root, 'usernames.json'), () => ({}), { schema: WORKSPACE_USERNAMES_SCHEMA, onCorrupt: corrupt });
  }

  get indexDir(): string {
    return path.join(this.root, 'index');
  }

  get filesRoot(): string {
    return path.join(this.root, 'files');
  }

  async load(): Promise<void> {
    await mkdir(this.indexDir, { recursive: true });
    await mkdir(this.filesRoot, { recursive: true, mode: 0o711 });
    const users = await this.users.get();
    if (!users.owners || typeof users.owners !== 'object') users.owners = {};
    this.ownersMap = users.owners;
    this.namesMap = await this.usernames.get();
    for (const entry of await readdir(this.indexDir)) {
      const id = entry.replace(/\.json$/, '');
      if (!WORKSPACE_ID.test(id) || !entry.endsWith('.json')) continue;
      const file = path.join(this.indexDir, entry);
      try {
        let parsed: unknown;
        try {
          parsed = JSON.parse(await readFile(file, 'utf8'));
        } catch (err) {
          throw new Error(`not valid JSON: ${(err as Error).message}`);
        }
        const checked = checkDocument(WORKSPACE_INDEX_SCHEMA, parsed);
        if (!checked.ok) throw new Error(checked.reason);
        const meta = checked.value as unknown as WorkspaceMeta;
        if (meta.id !== id) throw new Error(`names workspace ${meta.id}, not ${id}`);
        meta.open ??= {};
        meta.ids ??= [meta.owner];
        this.metas.set(id, meta);
      } catch (err) {
        // Moved aside with its bytes kept, like every data file of the wrong shape; that workspace starts anew.
        const movedTo = `${file}.corrupt-${Date.now()}`;
        const moved = await rename(file, movedTo).then(() => true, () => false);
        if (moved) healthFor(file).corrupt(file, movedTo, (err as Error).message);
        this.onProblem('workspace index file was unreadable: moved aside', { file, movedTo: moved ? movedTo : undefined, reason: (err as Error).message });
      }
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
    const owner = known.find((o) => this.byOwner(o)) ?? known[0] ?? ids[0];
    let changed = false;
    for (const id of ids) {
      if (this.ownersMap[id] === owner) continue;
      if (this.ownersMap[id] && this.byOwner(this.ownersMap[id])) continue; // never re-point an id that owns a workspace
      this.ownersMap[id] = owner;
      changed = true;
    }
    if (changed) {
      void this.users.update(() => undefined);
      const meta = this.byOwner(owner);
      if (meta) {
        for (const id of ids) if (!meta.ids.includes(id) && this.ownersMap[id] === owner) meta.ids.push(id);
        void this.save(meta);
      }
    }
    return owner;
  }

  /** The owner key of a sender without recording anything (for synchronous checks). */
  findOwner(senderId: string, senderAltId?: string): string | undefined {
    const ids = [canonicalId(senderId), canonicalId(senderAltId)].filter((x): x is string => Boolean(x));
    const known = ids.map((id) => this.ownersMap[id]).filter((x): x is string => Boolean(x));
    return known.find((o) => this.byOwner(o)) ?? known[0] ?? ids[0];
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
    await writeJsonAtomic(path.join(this.indexDir, `${meta.id}.json`), { version: WORKSPACE_INDEX_SCHEMA.version, ...meta });
  }

  /** True when the owner's workspace is open in the chat and was used within `idleMs`. */
  /** Whether any workspace was opened in `chat` and not closed (idle or not). */
  anyOpenIn(chatId: string): boolean {
    for (const meta of this.metas.values()) if (meta.open[chatId] !== undefined) return true;
    return false;
  }

  isOpen(meta: WorkspaceMeta | undefined, chatId: string, idleMs: number, now = Date.now()): boolean {
    const last = meta?.open[chatId];
    return last !== undefined && now - last <= idleMs;
  }

  async setOpen(meta: WorkspaceMeta, chatId: string, open: boolean): Promise<void> {
    if (open) meta.open[chatId] = Date.now();
    else delete meta.open[chatId];
    await this.save(meta);
  }

  /**
   * A private chat is known as `to` from now on (moved from its LID to its phone id): every workspace open in `from`
   * is open in `to` (the later activity kept) and no longer in `from`. Resolves once written.
   */
  async moveChat(from: string, to: string): Promise<void> {
    for (const meta of this.metas.values()) {
      const last = meta.open[from];
      if (last === undefined) continue;
      meta.open[to] = Math.max(meta.open[to] ?? 0, last);
      delete meta.open[from];
      await this.save(meta);
    }
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
    await this.usernames.update(() => undefined);
    await this.usernames.flush();
    await this.save(meta);
    return true;
  }

  /** Deletes every file of a workspace and leaves an empty folder (the username stays). */
  async wipeFiles(meta: WorkspaceMeta): Promise<void> {
    const dir = this.dirOf(meta);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true, mode: 0o700 });
  }

  /**
   * Deletes a workspace entirely (privacy delete): its files, its index file, its username and the ids linked to its
   * owner. Waits until users.json and usernames.json are on disk.
   */
  async remove(meta: WorkspaceMeta): Promise<void> {
    await rm(this.dirOf(meta), { recursive: true, force: true });
    await rm(path.join(this.indexDir, `${meta.id}.json`), { force: true });
    this.metas.delete(meta.id);
    for (const [name, id] of Object.entries(this.namesMap)) if (id === meta.id) delete this.namesMap[name];
    for (const [id, owner] of Object.entries(this.ownersMap)) if (owner === meta.owner) delete this.ownersMap[id];
    await this.users.update(() => undefined);
    await this.usernames.update(() => undefined);
    await this.flush();
  }

  async flush(): Promise<void> {
    await Promise.all([this.users.flush(), this.usernames.flush()]);
  }
}
