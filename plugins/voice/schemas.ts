import type { DataSchema } from '../../core/index.js';
import { VOICE_REPLY_CHOICES_SCHEMA } from './reply-choice.js';

/*
 * The voice plugin's data files. Declared to the core in `dataFiles` (index.ts), so the backup manifest names their
 * versions; each is checked on load (a file that does not match is set aside with its bytes kept).
 */

const str = { type: 'string' } as const;
const num = { type: 'number' } as const;

/** `data/audio_budget.json`: seconds of audio per user on one UTC day. */
export const AUDIO_BUDGET_SCHEMA: DataSchema = {
  name: 'audio budget',
  version: 1,
  schema: { type: 'object', required: ['day', 'used'], properties: { day: str, used: { type: 'object', additionalProperties: num } } },
};

/** `data/audio_archive/<chat>/notes/<n>.json`. */
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

/** What the plugin declares to the core (paths relative to DATA_DIR). */
export const VOICE_DATA_FILES = [
  { path: 'audio_budget.json', schema: AUDIO_BUDGET_SCHEMA },
  { path: 'audio_archive/<chat>/notes/<n>.json', schema: ARCHIVE_SEGMENT_SCHEMA },
  { path: 'voice_replies.json', schema: VOICE_REPLY_CHOICES_SCHEMA },
];
