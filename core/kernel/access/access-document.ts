import { Type } from '#typebox';
import { PluginStores } from '../../services/store/plugin-store.js';
import { Store } from '../../services/store/store-declarations.js';
import { ACCESS_SCHEMA, emptyAccess, type AccessDocument, type AccessDocumentStore } from './access-store.js';

// Apart from access-store.ts, whose types the plugin API package carries: this opens the store database.

/**
 * The access document as the core declares it (`core` namespace of the store database). Earlier versions kept it in
 * `data/access/state.json`: taken in once at the first start, then kept aside under `data/migrated/`.
 */
export const ACCESS_STORE = Store.doc('access', Type.Unsafe<AccessDocument>(ACCESS_SCHEMA.schema), emptyAccess, { path: 'access/state.json', title: ACCESS_SCHEMA.name });

/** The access document of a data folder, in its store database. */
export function accessDocument(dataDir: string): AccessDocumentStore {
  return new PluginStores('core', dataDir, [ACCESS_STORE]).document(ACCESS_STORE);
}
