import { Store, Type, type Static } from '../../core/index.js';
import { CONTEXT_MESSAGE, type ContextMessage } from './archive-note.js';

// What the voice plugin keeps, declared to the core (the archive's own declaration is VOICE_ARCHIVE in
// archive-note.ts). Declaring the plugin needs these at start; the classes that read and write them load with the
// first voice note, command or tool call (runtime.ts), so they live apart from them.

/** Seconds of audio each user had transcribed on one UTC day. */
export const BudgetDocSchema = Type.Object({ day: Type.String(), used: Type.Record(Type.String(), Type.Number()) });
export type BudgetDoc = Static<typeof BudgetDocSchema>;

/**
 * `data/audio_budget.json` (the layout of earlier versions, kept). A user's seconds today are theirs in `.mydata`
 * (section "voice") and follow their chat to a new id.
 */
export const AUDIO_BUDGET = Store.doc('audio-budget', BudgetDocSchema, () => ({ day: '', used: {} }), {
  path: 'audio_budget.json',
  title: 'audio budget',
  section: 'voice',
  exportAs: 'audioSecondsToday',
  people: { byId: (doc) => doc.used },
});

/**
 * `data/voice_replies.json` (the layout of earlier versions, kept): each chat's own choice of `.voice on|off`. A
 * private chat's choice is its person's in `.mydata` (section "voice"), and follows the chat to a new id.
 */
export const VOICE_REPLY_CHOICES = Store.doc('reply-choices', Type.Object({ chats: Type.Record(Type.String(), Type.Boolean()) }), () => ({ chats: {} }), {
  path: 'voice_replies.json',
  title: 'voice reply choices',
  section: 'voice',
  exportAs: 'replyChoices',
  people: { byId: (doc) => doc.chats },
});

/**
 * The voice notes the bot sent (voice replies), kept with the words they say so that a reply quoting one brings them
 * back; filed under the person they answered (their `.mydata`, their delete). 30 days, like kept media.
 */
export const SENT_VOICE_REPLIES = Store.chatLog('sent-voice-replies', Type.Object({ messageId: Type.String(), answers: Type.String(), at: Type.Integer(), text: Type.String() }), {
  path: 'voice_sent_replies',
  title: 'voice replies sent',
  keepDays: 30,
  at: (item) => item.at,
  people: { author: (item) => item.answers, messageId: (item) => item.messageId },
});

/**
 * Voice notes and audio files received in a chat that the archive does not hold (not heard when they came: the
 * provider failed, the sender was over their allowance…), with the sender as the network reported it then. A quote
 * names its id, sender and media as the quoting client likes: only a note recorded here (or heard) can later be
 * archived as someone's, when a quote makes the bot listen to it. 30 days, like kept media.
 */
export const VOICE_RECEIVED = Store.chatLog('voice-received', Type.Object({ messageId: Type.String(), senderId: Type.String(), at: Type.Integer(), kind: Type.String() }), {
  path: 'voice_received',
  title: 'voice notes received but not heard',
  keepDays: 30,
  at: (item) => item.at,
  people: { author: (item) => item.senderId, messageId: (item) => item.messageId },
});

/**
 * What the bot does with a voice note in a chat (`.voice <mode>`; DESIGN 5a):
 * `answer` answers it like typed words (the default); `transcript` sends its words, then the answer; `text-only` sends
 * its words and no answer (the family mode); `tldr` sends a short summary of a long note (the whole text on
 * `.voice full`), a short one's words; `off` (groups only) leaves voice notes alone.
 */
export const VOICE_MODES = ['answer', 'transcript', 'text-only', 'tldr', 'off'] as const;
export type VoiceMode = (typeof VOICE_MODES)[number];

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

/**
 * The last few messages of each chat, waiting as the "before" context of the chat's next voice note. A person's words
 * like any other: kept in the store, so `.mydata` lists them and a delete, a message deleted for everyone (by its
 * writer), an edit and a chat move reach them before a note could carry them into the archive.
 */
export const VOICE_CONTEXT = Store.chatDoc('context', Type.Object({ messages: Type.Array(CONTEXT_MESSAGE) }), () => ({ messages: [] as ContextMessage[] }), {
  title: 'voice context',
  exportAs: 'waitingContext',
  people: {
    items: (doc) => doc.messages,
    author: (m) => m.senderId,
    messageId: (m) => m.id,
    edited: (m, text) => ({ ...m, text }),
    same: (a, b) => a.id === b.id,
  },
});
