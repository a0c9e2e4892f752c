import type { DataSchema } from '../../core/index.js';

/*
 * The voice plugin's data files. Declared to the core in `dataFiles` (index.ts), so the backup manifest names their
 * versions; each is checked on load (a file that does not match is set aside with its bytes kept).
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

/**
 * What the plugin declares to the core (paths relative to DATA_DIR) besides its `stores` (the archive, the audio
 * budget, the reply choices and the sent voice replies: archive-note.ts, audio-budget.ts, reply-choice.ts, quoted-voice.ts).
 */
export const VOICE_DATA_FILES = [
  // Still named: a folder not converted yet (or a backup of one) holds them, and a restore compares their version.
  { path: 'audio_archive/<chat>/notes/<n>.json', schema: ARCHIVE_SEGMENT_SCHEMA },
];
