import type { PluginStore, StoredDoc } from '../../core/index.js';
import { VOICE_MODE, VOICE_MODES, type VoiceMode } from './stores.js';

export { VOICE_MODE, VOICE_MODES, type VoiceMode } from './stores.js';

/** What each mode does, in the words `.voice` lists them with. */
export const MODE_HELP: Record<VoiceMode, string> = {
  answer: 'I answer voice notes like typed messages',
  transcript: 'I send the words of each voice note, then my answer',
  'text-only': 'I send the words of each voice note and no answer',
  tldr: 'I send a short summary of long voice notes (the whole text with .voice full), the words of short ones',
  off: 'I leave voice notes alone (groups only)',
};

export function isVoiceMode(word: string): word is VoiceMode {
  return (VOICE_MODES as readonly string[]).includes(word);
}

/** The TL;DRs kept per chat for `.voice full` (the newest last): which sent summary stands for which note. */
const TLDRS_KEPT = 20;

type ModeDoc = { mode?: VoiceMode; tldrs?: Array<{ sent: string; note: string }> };

/**
 * Each chat's voice mode, kept in the declared store.
 *
 * @example
 * const modes = new VoiceModes(host.store);
 * await modes.set('123@g.us', 'text-only');
 * await modes.of('123@g.us'); // 'text-only'
 */
export class VoiceModes {
  constructor(private readonly store: PluginStore) {}

  private doc(chatId: string): StoredDoc<ModeDoc> {
    return this.store.chat(chatId).doc(VOICE_MODE) as StoredDoc<ModeDoc>;
  }

  /** The chat's mode: its own choice, else `answer`. */
  async of(chatId: string): Promise<VoiceMode> {
    return (await this.doc(chatId).get()).mode ?? 'answer';
  }

  async set(chatId: string, mode: VoiceMode): Promise<void> {
    await this.doc(chatId).save((doc) => {
      doc.mode = mode;
    });
  }

  /** Remembers that the message `sent` is the TL;DR of the voice note `note` (its message id). */
  async keepTldr(chatId: string, sent: string, note: string): Promise<void> {
    await this.doc(chatId).save((doc) => {
      doc.tldrs = [...(doc.tldrs ?? []), { sent, note }].slice(-TLDRS_KEPT);
    });
  }

  /**
   * The voice note `.voice full` means: the one quoted (a note itself, or a TL;DR of one), else the chat's latest TL;DR'd note.
   */
  async noteFor(chatId: string, quotedId: string | undefined): Promise<string | undefined> {
    const tldrs = (await this.doc(chatId).get()).tldrs ?? [];
    if (quotedId) return tldrs.find((t) => t.sent === quotedId)?.note ?? quotedId;
    return tldrs.at(-1)?.note;
  }
}
