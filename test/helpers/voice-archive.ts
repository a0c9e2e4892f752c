import path from 'node:path';
import { PluginStores } from '../../core/services/store/plugin-store.js';
import type { PrivacyParticipant } from '../../core/kernel/port/privacy-participant.js';
import { AudioArchive, type ArchiveLog } from '../../plugins/voice/archive.js';
import { VOICE_ARCHIVE } from '../../plugins/voice/archive-note.js';

/**
 * The voice archive over `root` (`<DATA_DIR>/audio_archive`) outside a running bot: the plugin's class on the store the
 * core makes from its declaration, and the privacy participant (`.mydata`, deletes, revokes, edits, chat moves) the core
 * makes from it. A new call over the same folder is a restart.
 */
export function voiceArchiveAt(root: string, options: { log?: ArchiveLog } = {}): { archive: AudioArchive; stores: PluginStores; privacy: PrivacyParticipant } {
  if (path.basename(root) !== 'audio_archive') throw new Error(`the archive lives in <DATA_DIR>/audio_archive, not ${root}`);
  const stores = new PluginStores('voice', path.dirname(root), [VOICE_ARCHIVE]);
  const [privacy] = stores.participants();
  return { archive: new AudioArchive(stores, { ...options, folder: root }), stores, privacy };
}

/** `voiceArchiveAt(root).archive`. */
export const archiveAt = (root: string, options: { log?: ArchiveLog } = {}): AudioArchive => voiceArchiveAt(root, options).archive;
