import { readFile } from 'node:fs/promises';
import { type PrivacyParticipant } from '../../core/index.js';
import { changeableBy, writtenBy } from '../../core/storage.js';
import { archivedChatIds, archivedNotesWhere, editArchivedContext, eraseArchived, moveArchivedChat, type AudioArchive } from './archive.js';
import type { RecentMessages } from './recent-messages.js';

/** Audio bytes put into one export at most (base64 in the JSON); transcripts are always complete. */
const MAX_EXPORT_AUDIO_BYTES = 16 * 1024 * 1024;

/**
 * The voice archive in the privacy controls: a person's voice notes (transcript, audio, context) in every chat, their
 * messages in other notes' context, notes deleted for everyone, and edited messages in a note's context.
 */
export function voicePrivacy(archive: AudioArchive, recent?: RecentMessages): PrivacyParticipant {
  return {
    name: 'voice notes',
    // A private chat moving from its LID to its phone id keeps its archived notes (its `.voice on|off` choice follows
    // from the store declaration); the messages kept in memory as the next note's context come again from the (moved)
    // history.
    async moveChat(from, to) {
      await moveArchivedChat(archive, from, to);
      recent?.forget(from);
      recent?.forget(to);
    },
    async exportFor(person) {
      const out: Record<string, unknown[]> = {};
      let audioBytes = 0;
      for (const chat of await archivedChatIds(archive)) {
        const notes = await archivedNotesWhere(archive, chat, (n) => writtenBy(n.senderId, person));
        if (!notes.length) continue;
        out[chat] = await Promise.all(
          notes.map(async (n) => {
            const file = archive.audioPath(chat, n);
            const bytes = file ? await readFile(file).catch(() => undefined) : undefined;
            const include = bytes && audioBytes + bytes.length <= MAX_EXPORT_AUDIO_BYTES;
            if (include) audioBytes += bytes.length;
            return { ...n, ...(include ? { audioBase64: bytes.toString('base64') } : bytes ? { audioOmitted: 'over the export size limit; ask the owner' } : {}) };
          }),
        );
      }
      return out;
    },
    async deleteFor(person) {
      let removed = 0;
      for (const chat of await archivedChatIds(archive)) {
        removed += await eraseArchived(archive, chat, (n) => writtenBy(n.senderId, person), (m) => writtenBy(m.senderId, person));
      }
      return removed;
    },
    revoke: (chatId, messageId, author) =>
      eraseArchived(
        archive,
        chatId,
        (n) => n.messageId === messageId && changeableBy(n.senderId, author),
        (m) => m.id === messageId && changeableBy(m.senderId, author),
      ),
    // A voice note has no text to edit; a text message kept as a note's context gets its new words.
    edit: (chatId, messageId, text, author) => editArchivedContext(archive, chatId, (m) => m.id === messageId && changeableBy(m.senderId, author), text),
  };
}
