import type { DataSchema } from '../../core/index.js';

/*
 * The workspace's data files. Declared to the core in `dataFiles` (index.ts), so the backup manifest names their
 * versions and an interrupted write's leftovers are swept at start; each is checked on load through JsonFile /
 * checkDocument (a file that does not match is set aside with its bytes kept).
 */

const str = { type: 'string' } as const;
const num = { type: 'number' } as const;
const mapOf = (values: object) => ({ type: 'object', additionalProperties: values });

/** `data/workspaces/users.json`. */
export const WORKSPACE_USERS_SCHEMA: DataSchema = {
  name: 'workspace users',
  version: 1,
  schema: { type: 'object', required: ['owners'], properties: { owners: mapOf(str) } },
};

/** `data/workspaces/usernames.json`: a plain map, so its version sits under a key no username can take. */
export const WORKSPACE_USERNAMES_SCHEMA: DataSchema = {
  name: 'workspace usernames',
  version: 1,
  versionKey: '$version',
  schema: mapOf(str),
};

/** `data/workspaces/index/<id>.json`. */
export const WORKSPACE_INDEX_SCHEMA: DataSchema = {
  name: 'workspace index',
  version: 1,
  schema: {
    type: 'object',
    required: ['id', 'owner', 'createdAt'],
    properties: { id: str, owner: str, ids: { type: 'array', items: str }, createdAt: num, username: str, open: mapOf(num) },
  },
};

/** What the plugin declares to the core (paths relative to DATA_DIR). */
export const WORKSPACE_DATA_FILES = [
  { path: 'workspaces/users.json', schema: WORKSPACE_USERS_SCHEMA },
  { path: 'workspaces/usernames.json', schema: WORKSPACE_USERNAMES_SCHEMA },
  { path: 'workspaces/index/<id>.json', schema: WORKSPACE_INDEX_SCHEMA },
];
