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

/** The polls the bot sent (store database; earlier `data/whatsapp/polls.json`), with the secret their votes are encrypted with. */
export const SENT_POLLS_SCHEMA: DataSchema = {
  name: 'sent polls',
  version: 1,
  schema: {
    type: 'object',
    required: ['polls'],
    properties: {
      polls: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'chat', 'at', 'question', 'options', 'secret'],
          properties: {
            id: { type: 'string', minLength: 1 },
            chat: { type: 'string', minLength: 1 },
            at: { type: 'number' },
            question: { type: 'string' },
            options: { type: 'array', minItems: 2, maxItems: 12, items: { type: 'string' } },
            // 32 bytes, base64.
            secret: { type: 'string', pattern: '^[A-Za-z0-9+/]{43}=$' },
            about: { type: 'string' },
          },
        },
      },
    },
  },
};

/** The adapter's data files with their schemas (paths relative to DATA_DIR). */
export const WHATSAPP_DATA_FILES: Array<{ path: string; schema: DataSchema }> = [
  { path: 'whatsapp/seen-messages.json', schema: SEEN_MESSAGES_SCHEMA },
  { path: 'whatsapp/identity-links.json', schema: IDENTITY_LINKS_SCHEMA },
  { path: 'whatsapp/polls.json', schema: SENT_POLLS_SCHEMA },
];
