import { Type } from '#typebox';
import { userPart } from '../port/ids.js';
import { PluginStores } from '../../services/store/plugin-store.js';
import { Store } from '../../services/store/store-declarations.js';
import { ACCESS_SCHEMA, emptyAccess, type AccessDocument, type AccessDocumentStore, type PairingRequest } from './access-store.js';

// Apart from access-store.ts, whose types the plugin API package carries: this opens the store database.

type Persona = AccessDocument['personas'][string];
type Pause = AccessDocument['paused'][string];

/** The longer of two pauses of a chat: until `.bot on` (null) over any time, else the later time. */
export const longerPause = (moving: Pause, existing: Pause): Pause => (existing.until !== null && (moving.until === null || moving.until > existing.until) ? moving : existing);

/**
 * The access document as the core declares it (`core` namespace of the store database). Earlier versions kept it in
 * `data/access/state.json`: taken in once at the first start, then kept aside under `data/migrated/`. Its parts say
 * what a person's `.mydata` holds and deletes, and what follows a chat to its new id (LID → phone):
 * - `approved`: shown, never deleted by the person (an owner's decision; their delete must not let them in or out);
 * - `pairingRequests`: theirs by the stranger's ids (phone or LID), with the texts held; deleted with them;
 * - `personas`: their private chat's and those they set; deleted with them; follow the chat (the new id's own kept);
 * - `paused`: the owner's takeover of a chat, no person's data; follows the chat, the longer pause wins.
 * Groups an owner opened are about group chats only: in no person's data, never moved.
 */
export const ACCESS_STORE = Store.doc('access', Type.Unsafe<AccessDocument>(ACCESS_SCHEMA.schema), emptyAccess, {
  path: 'access/state.json',
  title: ACCESS_SCHEMA.name,
  section: 'access',
  exportAs: '',
  parts: {
    // The approved id is the user part (digits) of the sender's id.
    approved: { list: (doc) => doc.approved, people: (entry: AccessDocument['approved'][number]) => [entry.id], privacy: 'export' },
    pairingRequests: { list: (doc) => doc.pending, people: (request: PairingRequest) => [userPart(request.sender), request.senderAltId === undefined ? undefined : userPart(request.senderAltId)] },
    personas: { byChat: (doc) => doc.personas, people: (persona: Persona) => [persona.by] },
    paused: { byChat: (doc) => doc.paused, privacy: 'none', merge: longerPause },
  },
});

/** The access document in a data folder's store database (the core's stores, or opened alone). */
export function accessDocument(dataDir: string, stores: PluginStores = new PluginStores('core', dataDir, [ACCESS_STORE])): AccessDocumentStore {
  return stores.document(ACCESS_STORE);
}
