import type { PluginStore, StoredSearchLog } from '../../core/index.js';
import { chatsInOldLayout, migrateOldArchive, nameAudioByMessage } from './archive-migration.js';
import { audioFileFor, VOICE_ARCHIVE, type ArchivedNote, type NoteItem } from './archive-note.js';

export { CONTEXT_SIZE, cleanContext, type ContextMessage } from './archive-note.js';
import { CONTEXT_SIZE, cleanContext, type ContextMessage } from './archive-note.js';

/** What `add` stores. */
export interface NoteInput {
  messageId: string;
  senderId: string;
  senderName?: string;
  /** Unix ms. */
  at: number;
  transcript: string;
  kind?: 'voice' | 'audio';
  /** The audio file as received (kept locally next to the transcript). */
  audio?: { bytes: Buffer; ext: string };
  /** The messages before the note, oldest first (the last CONTEXT_SIZE are kept). */
  before?: ContextMessage[];
}

export type { ArchivedNote } from './archive-note.js';

export interface NoteContext {
  before: ContextMessage[];
  after: ContextMessage[];
}

/** One search result: the note and a short quote around the words that matched. */
export interface SearchHit {
  note: ArchivedNote;
  quote: string;
}

/** What the archive tells its owner (the plugin logs it). */
export interface ArchiveLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** One chat of the archive: its search log, the old-layout conversion, the next note number and the notes waiting for "after" context. */
interface ChatState {
  log: StoredSearchLog<NoteItem>;
  /** The conversion of the chat's files of earlier versions (once per run, before anything else reads the chat). */
  ready: Promise<void>;
  /** Writes of this chat (notes, context) one after another: numbers are handed out in order. */
  queue: Promise<unknown>;
  nextSeq?: number;
  /** Message ids of the last notes still collecting their "after" messages, and how many each has (read on first need). */
  pending?: Map<string, number>;
}

const noteOf = (item: NoteItem): ArchivedNote => ({
  seq: item.seq,
  messageId: item.id,
  senderId: item.senderId,
  ...(item.senderName ? { senderName: item.senderName } : {}),
  at: item.at,
  transcript: item.text,
  kind: item.kind,
  ...(item.audioFile ? { audioFile: item.audioFile } : {}),
  ...(item.removed ? { removed: true } : {}),
});
const contextOf = (item: NoteItem): NoteContext => ({ before: item.before ?? [], after: item.after ?? [] });

/** A short quote of `text` around the first word of `query` it contains. */
export function quoteAround(text: string, query: string, width = 160): string {
  if (text.length <= width) return text;
  const lower = text.toLowerCase();
  const words = query.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 1);
  const at = words.map((w) => lower.indexOf(w)).filter((i) => i >= 0).sort((a, b) => a - b)[0] ?? 0;
  const start = Math.max(0, Math.min(at - Math.floor(width / 3), text.length - width));
  return `${start > 0 ? '…' : ''}${text.slice(start, start + width).trim()}${start + width < text.length ? '…' : ''}`;
}

function requireChatId(chatId: string): string {
  if (typeof chatId !== 'string' || !chatId.trim()) throw new TypeError('AudioArchive: a chat id is required');
  return chatId;
}

/** Runs `work` after the chat's earlier writes. */
function serial<T>(chat: ChatState, work: () => Promise<T>): Promise<T> {
  const run = chat.queue.then(work);
  chat.queue = run.catch(() => undefined);
  return run;
}

/** The number the chat's next note gets: one past the highest ever given (erased notes keep theirs). */
async function nextSeq(chat: ChatState): Promise<number> {
  if (chat.nextSeq === undefined) {
    let max = 0;
    await chat.log.where((item) => {
      if (item.seq > max) max = item.seq;
      return false;
    });
    chat.nextSeq = max + 1;
  }
  return chat.nextSeq;
}

/** The notes still collecting "after" messages: among the chat's last CONTEXT_SIZE notes, those with fewer than that. */
async function pendingOf(chat: ChatState): Promise<Map<string, number>> {
  if (!chat.pending) {
    const notes = await chat.log.where((item) => !item.removed);
    chat.pending ??= new Map(
      notes
        .sort((a, b) => a.at - b.at || a.seq - b.seq)
        .slice(-CONTEXT_SIZE)
        .filter((n) => (n.after?.length ?? 0) < CONTEXT_SIZE)
        .map((n) => [n.id, n.after?.length ?? 0]),
    );
  }
  return chat.pending;
}

/**
 * The local audio archive, `data/audio_archive/<chat>/`, kept by the core as the plugin's `VOICE_ARCHIVE` search log
 * (archive-note.ts): per chat, month files `<YYYY-MM>.jsonl` of one line per note — its transcript, sender, audio file
 * and its 6 messages before and after (the "after" ones filled in as they arrive) — with the core's full-text index and
 * its snapshots, and each note's audio file (`audio/<message>.<ext>`). From that declaration the core answers
 * `.mydata`, deletes, messages deleted for everyone, edits and chat moves; this class only adds, observes and
 * searches. A folder in the layout of earlier versions (`notes/`, `context/`, audio named by number) is converted at
 * start (`convertAll`), and at the chat's first use when that could not finish (see archive-migration.ts).
 *
 * Search is per chat by construction: every call takes the chat id, each chat has its own folder and index, and
 * there is no call that reads more than one chat. A note becomes visible only after its audio is written, so a
 * failure never leaves half a note.
 *
 * @example
 * const archive = new AudioArchive(host.store);
 * await archive.add('123@g.us', { messageId: 'm1', senderId: '62…@s.whatsapp.net', at: Date.now(), transcript: 'the invoice is paid' });
 * const hits = await archive.search('123@g.us', 'invoice', 5);
 */
export class AudioArchive {
  readonly #store: PluginStore;
  readonly #state = new Map<string, ChatState>();
  readonly #log?: ArchiveLog;
  readonly #folder?: string;

  /**
   * `store`: the voice plugin's `host.store` (it declares `VOICE_ARCHIVE`). `folder`: the archive's folder on disk
   * (`DATA_DIR/audio_archive`), where `convertAll` finds the chats of the old layout that the store does not know.
   */
  constructor(store: PluginStore, options: { log?: ArchiveLog; folder?: string } = {}) {
    this.#store = store;
    this.#log = options.log;
    this.#folder = options.folder;
    // What the core changed itself (a delete, a message deleted for everyone, a chat move) is read again.
    store.onChange(VOICE_ARCHIVE, (chatId) => {
      const chat = chatId === undefined ? undefined : this.#state.get(chatId);
      if (chat) chat.nextSeq = chat.pending = undefined;
    });
  }

  /** One chat's state; the first use in this run converts the chat's files of earlier versions, if any. */
  #chat(chatId: string): ChatState {
    requireChatId(chatId);
    let chat = this.#state.get(chatId);
    if (!chat) {
      const log = this.#store.chat(chatId).searchLog(VOICE_ARCHIVE);
      const ready = migrateOldArchive(log, this.#log).then(() => nameAudioByMessage(log, this.#log));
      chat = { log, ready, queue: ready.catch(() => undefined) };
      this.#state.set(chatId, chat);
      // A failed conversion is tried again at the chat's next use.
      ready.catch(() => this.#state.get(chatId) === chat && this.#state.delete(chatId));
    }
    return chat;
  }

  async #ready(chatId: string): Promise<ChatState> {
    const chat = this.#chat(chatId);
    await chat.ready;
    return chat;
  }

  /** Loads a chat's notes and search index now (otherwise done on first use). */
  async load(chatId: string): Promise<void> {
    await (await this.#ready(chatId)).log.size();
  }

  /** Archives one voice note in `chatId`. */
  async add(chatId: string, input: NoteInput): Promise<ArchivedNote> {
    const [note] = await this.addMany(chatId, [input]);
    return note;
  }

  /** Archives several notes at once (imports and the benchmark): their lines are written together. */
  async addMany(chatId: string, inputs: NoteInput[]): Promise<ArchivedNote[]> {
    const chat = await this.#ready(chatId);
    return serial(chat, async () => {
      const items: NoteItem[] = [];
      let seq = await nextSeq(chat);
      for (const input of inputs) {
        const item: NoteItem = {
          id: String(input.messageId),
          seq,
          senderId: String(input.senderId),
          ...(input.senderName ? { senderName: input.senderName } : {}),
          text: String(input.transcript),
          at: Number(input.at),
          kind: input.kind ?? 'voice',
        };
        if (input.audio) {
          item.audioFile = audioFileFor(item.id, input.audio.ext);
          // The audio first: the line that names it makes the note visible.
          await chat.log.putFile(item.audioFile, input.audio.bytes);
        }
        const before = cleanContext(input.before);
        if (before.length) item.before = before;
        items.push(item);
        seq++;
      }
      await chat.log.addMany(items);
      chat.nextSeq = seq;
      // A note archived as it arrives collects the messages after it.
      if (inputs.length === 1) chat.pending?.set(items[0].id, 0);
      return items.map(noteOf);
    });
  }

  /**
   * Records a message of `chatId` as "after" context of the notes still waiting for theirs (fewer than 6).
   * A note's own message is never its own context.
   */
  async observe(chatId: string, message: ContextMessage): Promise<void> {
    const chat = await this.#ready(chatId);
    await serial(chat, async () => {
      const pending = await pendingOf(chat);
      if (!pending.size) return;
      const [line] = cleanContext([message]);
      const waiting = (item: NoteItem) => pending.has(item.id) && !item.removed && item.id !== message.id && (item.after?.length ?? 0) < CONTEXT_SIZE;
      await chat.log.changeWhere(waiting, (item) => {
        const after = [...(item.after ?? []), line];
        if (after.length >= CONTEXT_SIZE) pending.delete(item.id);
        else pending.set(item.id, after.length);
        return { ...item, after };
      });
    });
  }

  /** Up to `limit` notes of `chatId` that match `query`, best first, with a short quote. Only that chat is searched. */
  async search(chatId: string, query: string, limit = 5): Promise<SearchHit[]> {
    const chat = this.#chat(chatId);
    const words = String(query ?? '').trim();
    if (!words) return [];
    await chat.ready;
    const hits = await chat.log.search(words, { limit: Math.max(1, Math.min(20, Math.floor(limit) || 5)) });
    return hits.filter((hit) => !hit.message.removed).map((hit) => ({ note: noteOf(hit.message), quote: quoteAround(hit.message.text, words) }));
  }

  /** The 6 messages before and (so far) after the note of `chatId` with number `seq`. */
  async context(chatId: string, seq: number): Promise<NoteContext> {
    const chat = await this.#ready(chatId);
    const [note] = await chat.log.where((item) => item.seq === seq && !item.removed);
    return note ? contextOf(note) : { before: [], after: [] };
  }

  /**
   * The note message `messageId` of `chatId` became, erased ones too (`removed`: deleted for everyone or with its
   * person's data), or undefined; reads that one chat only. For a reply quoting a voice note.
   */
  async noteOf(chatId: string, messageId: string): Promise<ArchivedNote | undefined> {
    const chat = await this.#ready(chatId);
    const [item] = await chat.log.where((i) => i.id === messageId);
    return item ? noteOf(item) : undefined;
  }

  /** How many notes `chatId` holds (an erased note's marker is not one). */
  async count(chatId: string): Promise<number> {
    return (await (await this.#ready(chatId)).log.where((item) => !item.removed)).length;
  }

  /** The absolute path of a note's audio file, if it was kept. */
  audioPath(chatId: string, note: ArchivedNote): string | undefined {
    return note.audioFile ? this.#chat(chatId).log.filePath(note.audioFile) : undefined;
  }

  /**
   * Converts every chat folder still in the layout of earlier versions now (at the plugin's start), instead of at each
   * chat's first use; a chat whose conversion fails is said in the log and tried again at its first use.
   */
  async convertAll(): Promise<void> {
    // A chat with no note since the update is in no table of the store yet: only its folder names it.
    const old = this.#folder ? await chatsInOldLayout(this.#folder) : [];
    const chats = new Set([...(await this.#store.chats(VOICE_ARCHIVE)), ...old]);
    for (const chatId of chats) await this.#ready(chatId).catch(() => undefined);
  }

  /** Waits for pending writes; the core writes the lines and index snapshots at stop (call at shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.#state.values()].map((chat) => chat.queue));
    await Promise.all([...this.#state.values()].map((chat) => chat.log.flush()));
  }
}
