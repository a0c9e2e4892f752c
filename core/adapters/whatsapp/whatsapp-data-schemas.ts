// Type only (it vanishes when compiled): the shape every data file's schema has, not another file's schema.
import type { DataSchema } from '../../services/store/schemas.js';

/**
 * The schemas of the WhatsApp adapter's own data files. The adapter owns them (no one else writes these files);
 * the composition root hands them to the backup manifest, the restore check and `npm run doctor`.
 */

/** `data/whatsapp/seen-messages.json`. */
export const SEEN_MESSAGES_SCHEMA: DataSchema = {
  name: 'seen messages',
  version: 1,
  schema: { type: 'object', required: ['keys'], properties: { keys: { type: 'array', items: { type: 'string' } } } },
};

/** `data/whatsapp/identity-links.json`. */
export const IDENTITY_LINKS_SCHEMA: DataSchema = {
  name: 'identity links',
  version: 1,
  schema: { type: 'object', properties: { lidToPhone: { type: 'object', additionalProperties: { type: 'string' } } } },
};

/** The adapter's data files with their schemas (paths relative to DATA_DIR). */
export const WHATSAPP_DATA_FILES: Array<{ path: string; schema: DataSchema }> = [
  { path: 'whatsapp/seen-messages.json', schema: SEEN_MESSAGES_SCHEMA },
  { path: 'whatsapp/identity-links.json', schema: IDENTITY_LINKS_SCHEMA },
];
