import type { DataSchema } from '../../core/index.js';

/*
 * The voice plugin's files of earlier layouts, named in its archive's declaration (`earlierFiles`, archive-note.ts) so
 * the backup manifest names their version; each is checked when converted (one that does not match is set aside with
 * its bytes kept).
 */

const str = { type: 'string' } as const;
const num = { type: 'number' } as const;

/**
 * `data/audio_archive/<chat>/notes/<n>.json`: the archive's layout before it moved onto the core's search log. Read
 * only by the one-time conversion (archive-migration.ts), which checks each old file against it.
 */
export const ARCHIVE_SEGMENT_SCHEMA: DataSchema = {
  name: 'voice archive segment',
  version: 1,
  schema: {
    type: 'object',
    required: ['chatId', 'notes'],
    properties: {
      chatId: str,
      notes: {
        type: 'array',
        items: {
          type: 'object',
          required: ['seq', 'messageId', 'senderId', 'at', 'transcript'],
          properties: { seq: { type: 'integer' }, messageId: str, senderId: str, senderName: str, at: num, transcript: str, kind: str, audioFile: str },
        },
      },
    },
  },
};
