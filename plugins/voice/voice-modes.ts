import { Store, Type, type StoredDoc, type PluginStore } from '../../core/index.js';

/**
 * What the bot does with a voice note in a chat (`.voice <mode>`; DESIGN 5a):
 * `answer` answers it like typed words (the default); `transcript` sends its words, then the answer; `text-only` sends
 * its words and no answer (the family mode); `tldr` sends a short summary of a long note (the whole text on
 * `.voice full`), a short one's words; `off` (groups only) leaves voice notes alone.
 */
export const VOICE_MODES = ['answer', 'transcript', 'text-only', 'tldr', 'off'] as const;
export type VoiceMode = (typeof VOICE_MODES)[number];

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

/**
 * A chat's voice mode and its latest TL;DRs. A chat document: a private chat's is its person's (`.mydata`, delete),
 * and it follows the chat to a new id (LID → phone).
 */
export const VOICE_MODE = Store.chatDoc(
  'mode',
  Type.Object({
    mode: Type.Optional(Type.Union(VOICE_MODES.map((m) => Type.Literal(m)))),
    tldrs: Type.Optional(Type.Array(Type.Object({ sent: Type.String(), note: Type.String() }))),
  }),
  () => ({}),
  { title: 'voice mode', section: 'voice', exportAs: 'mode' },
);

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
