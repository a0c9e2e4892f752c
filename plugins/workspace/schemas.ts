import { Store, Type, type Static } from '../../core/index.js';

/*
 * What the workspace keeps, declared to the core (`definePlugin({ stores })`) and opened through `host.store`, in the
 * layout DESIGN.md section 7 names (files written before the move load as they are). From these declarations the
 * core writes each file atomically, checks it on load (a file that does not parse or match is set aside with its
 * bytes kept, and only that document starts new), holds writes during a backup, names the versions in the backup
 * manifest and writes everything at stop. The privacy controls follow from them too: a workspace is its person's as
 * a whole (`owner`), with its files folder; its site username goes with it (`refersTo`); the chats it is open in
 * follow a chat's move to a new id (`byChat`); the person's ids in users.json follow `people.byId`.
 */

const IdMap = Type.Record(Type.String(), Type.String());

/** `data/workspaces/users.json`: every known id (phone jid or LID) → owner key; a phone and its LID point to the same owner. */
export const WORKSPACE_USERS = Store.doc('users', Type.Object({ owners: IdMap }), () => ({ owners: {} }), {
  path: 'workspaces/users.json',
  title: 'workspace users',
  // In `.mydata` beside the workspace itself: the person's ids and the owner key they lead to. Deleted with the
  // person; an id moving (LID → phone) takes its link along.
  section: 'workspace ids',
  exportAs: '',
  people: { byId: (doc) => doc.owners },
});

const WorkspaceMetaSchema = Type.Object({
  id: Type.String(),
  /** The owner key: the first id the person was seen under (phone jid or LID). */
  owner: Type.String(),
  /** Every id of the owner seen so far (phone jid and LID). */
  ids: Type.Optional(Type.Array(Type.String())),
  createdAt: Type.Number(),
  username: Type.Optional(Type.String()),
  /** Chats the workspace is open in, with the time of the last activity there. */
  open: Type.Optional(Type.Record(Type.String(), Type.Number())),
});

/** One workspace's metadata, as the plugin uses it (`ids` and `open` always present). */
export type WorkspaceMeta = Static<typeof WorkspaceMetaSchema> & { ids: string[]; open: Record<string, number> };

/** A workspace id: 16 hex digits, also its index file's and its files folder's name. */
export const WORKSPACE_ID = /^[a-f0-9]{16}$/;

/**
 * `data/workspaces/index/<workspace id>.json`: one document per workspace, keyed by the workspace id (not a chat id).
 * It is its person's as a whole: `.mydata` lists it with its files (`workspaces/files/<id>/`), and a delete removes the
 * document, the folder, its site username and (users.json) the person's ids, whichever of their ids they write from.
 */
export const WORKSPACE_INDEX = Store.chatDoc('index', WorkspaceMetaSchema, (id) => ({ id, owner: '', ids: [], createdAt: 0, open: {} }), {
  path: 'workspaces/index',
  title: 'workspace index',
  section: 'workspace',
  exportAs: 'workspaces',
  // A file copied in under another workspace's name is set aside rather than taken for that workspace.
  check: (meta, id) => (meta.id === id ? undefined : `names workspace ${meta.id.slice(0, 40)}, not ${id}`),
  owner: {
    ids: (meta) => [meta.owner, ...(meta.ids ?? [])].filter(Boolean),
    folder: (id) => (WORKSPACE_ID.test(id) ? `workspaces/files/${id}` : undefined),
  },
  // A private chat moving from its LID to its phone id stays in the workspaces open there.
  byChat: (meta) => meta.open,
});

/** `data/workspaces/usernames.json`: site username → workspace id. A plain map, so its version sits under `$version`. */
export const WORKSPACE_USERNAMES = Store.doc('usernames', IdMap, () => ({}), {
  path: 'workspaces/usernames.json',
  title: 'workspace usernames',
  versionKey: '$version',
  section: 'workspace',
  exportAs: 'site usernames',
  // A username goes with its workspace.
  refersTo: { decl: WORKSPACE_INDEX, map: (names) => names },
});

// The index first: the core still deletes it last, after the ids its `owner` names (see DocOwner).
export const WORKSPACE_STORES = [WORKSPACE_INDEX, WORKSPACE_USERNAMES, WORKSPACE_USERS];
