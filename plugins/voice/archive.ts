import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { healthFor, SearchLogs, writeFileAtomicSafe, type ChatSearchLog } from '../../core/storage.js';
import { migrateOldArchive } from './archive-migration.js';
import { ARCHIVE_HEADER, noteItem, type ArchivedNote, type NoteItem } from './archive-note.js';

export { CONTEXT_SIZE, cleanContext, type ContextMessage } from './archive-note.js';
import { CONTEXT_SIZE, cleanContext, type ContextMessage } from './archive-note.js';

/**
 * Months with at least this many notes keep a snapshot of their search index beside them, so loading them needs no
 * re-indexing (smaller months index in milliseconds).
 */
export const SNAPSHOT_MIN_NOTES = 2000;

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
  log: ChatSearchLog<NoteItem>;
  /** The conversion of the chat's old-layout files (once per run, before anything else reads the chat). */
  ready: Promise<void>;
  /** Writes of this chat (notes, context, erasures) one after another: numbers are handed out in order. */
  queue: Promise<unknown>;
  nextSeq?: number;
  /** Numbers of the last notes still collecting their "after" messages, and how many each has (read on first need). */
  pending?: Map<number, number>;
}

interface Internals {
  logs: SearchLogs<NoteItem>;
  state: Map<string, ChatState>;
  log?: ArchiveLog;
}

/** The archive's parts the module's privacy and move functions use (kept off the class: its API is one chat at a time). */
const internals = new WeakMap<AudioArchive, Internals>();

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
async function pendingOf(chat: ChatState): Promise<Map<number, number>> {
  if (!chat.pending) {
    const notes = await chat.log.where((item) => !item.removed);
    chat.pending ??= new Map(
      notes
        .sort((a, b) => a.seq - b.seq)
        .slice(-CONTEXT_SIZE)
        .filter((n) => (n.after?.length ?? 0) < CONTEXT_SIZE)
        .map((n) => [n.seq, n.after?.length ?? 0]),
    );
  }
  return chat.pending;
}

/**
 * The local audio archive, `data/audio_archive/<chat>/`: per chat, the audio files (`audio/<n>.<ext>`) and, on the
 * core's per-chat search log (the engine recall uses), one line per note in month files `<YYYY-MM>.jsonl` — its
 * transcript, sender, audio file and its 6 messages before and after (the "after" ones filled in as they arrive) —
 * with the core's full-text index and its snapshots. A folder in the layout of earlier versions (`notes/`,
 * `context/`) is converted on first use (see archive-migration.ts).
 *
 * Search is per chat by construction: every call takes the chat id, each chat has its own folder and index, and
 * there is no call that reads more than one chat. A note becomes visible only after its audio is written, so a
 * failure never leaves half a note.
 *
 * @example
 * const archive = new AudioArchive('data/audio_archive');
 * await archive.add('123@g.us', { messageId: 'm1', senderId: '62…@s.whatsapp.net', at: Date.now(), transcript: 'the invoice is paid' });
 * const hits = await archive.search('123@g.us', 'invoice', 5);
 */
export class AudioArchive {
  constructor(readonly root: string, options: { log?: ArchiveLog; snapshotMinNotes?: number } = {}) {
    const log = options.log;
    const logs = new SearchLogs<NoteItem>(
      root,
      { header: ARCHIVE_HEADER, item: noteItem, keepsEmpty: true },
      {
        setAside: (file, movedTo, reason) => healthFor(file).corrupt(file, movedTo, `voice archive: ${reason}`),
        badLines: (file, count) => healthFor(file).skippedLines(file, count, 'not a valid voice archive line'),
        writeFailed: (file, err) => healthFor(file).writeFailed(file, err),
        writeRecovered: (file) => healthFor(file).writeRecovered(file),
        indexRebuilt: (file, notes, reason) => log?.info({ file, notes, reason }, `voice archive: index of ${path.basename(file)} rebuilt from its notes (${notes}): ${reason}`),
        snapshotFailed: (dir, err) => log?.warn({ err, dir }, 'voice archive: could not write a search-index snapshot (the next start indexes that month again)'),
      },
      { snapshotMinLines: options.snapshotMinNotes ?? SNAPSHOT_MIN_NOTES },
    );
    internals.set(this, { logs, state: new Map(), log });
  }

  /** One chat's state; the first use in this run converts the chat's old-layout files, if any. */
  private chat(chatId: string): ChatState {
    requireChatId(chatId);
    const { logs, state, log } = internals.get(this)!;
    let chat = state.get(chatId);
    if (!chat) {
      const searchLog = logs.chat(chatId);
      chat = { log: searchLog, ready: migrateOldArchive(searchLog, log), queue: Promise.resolve() };
      chat.queue = chat.ready.catch(() => undefined);
      state.set(chatId, chat);
    }
    return chat;
  }

  /** Loads a chat's notes and search index now (otherwise done on first use). */
  async load(chatId: string): Promise<void> {
    const chat = this.chat(chatId);
    await chat.ready;
    await chat.log.size();
  }

  /** Archives one voice note in `chatId`. */
  async add(chatId: string, input: NoteInput): Promise<ArchivedNote> {
    const [note] = await this.addMany(chatId, [input]);
    return note;
  }

  /** Archives several notes at once (imports and the benchmark): their lines are written together. */
  async addMany(chatId: string, inputs: NoteInput[]): Promise<ArchivedNote[]> {
    const chat = this.chat(chatId);
    await chat.ready;
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
          const ext = input.audio.ext.replace(/[^a-z0-9]/gi, '').slice(0, 8) || 'bin';
          item.audioFile = path.join('audio', `${seq}.${ext}`);
          // The audio first: the line that names it makes the note visible.
          await writeFileAtomicSafe(path.join(chat.log.dir, item.audioFile), input.audio.bytes);
        }
        const before = cleanContext(input.before);
        if (before.length) item.before = before;
        items.push(item);
        seq++;
      }
      await chat.log.addMany(items);
      chat.nextSeq = seq;
      // A note archived as it arrives collects the messages after it.
      if (inputs.length === 1) chat.pending?.set(items[0].seq, 0);
      return items.map(noteOf);
    });
  }

  /**
   * Records a message of `chatId` as "after" context of the notes still waiting for theirs (fewer than 6).
   * A note's own message is never its own context.
   */
  async observe(chatId: string, message: ContextMessage): Promise<void> {
    const chat = this.chat(chatId);
    await chat.ready;
    await serial(chat, async () => {
      const pending = await pendingOf(chat);
      if (!pending.size) return;
      const [line] = cleanContext([message]);
      const waiting = (item: NoteItem) => pending.has(item.seq) && !item.removed && item.id !== message.id && (item.after?.length ?? 0) < CONTEXT_SIZE;
      await chat.log.changeWhere(waiting, (item) => {
        const after = [...(item.after ?? []), line];
        if (after.length >= CONTEXT_SIZE) pending.delete(item.seq);
        else pending.set(item.seq, after.length);
        return { ...item, after };
      });
    });
  }

  /** Up to `limit` notes of `chatId` that match `query`, best first, with a short quote. Only that chat is searched. */
  async search(chatId: string, query: string, limit = 5): Promise<SearchHit[]> {
    const chat = this.chat(chatId);
    const words = String(query ?? '').trim();
    if (!words) return [];
    await chat.ready;
    const hits = await chat.log.search(words, { limit: Math.max(1, Math.min(20, Math.floor(limit) || 5)) });
    return hits.filter((hit) => !hit.message.removed).map((hit) => ({ note: noteOf(hit.message), quote: quoteAround(hit.message.text, words) }));
  }

  /** The 6 messages before and (so far) after a note of `chatId`. */
  async context(chatId: string, seq: number): Promise<NoteContext> {
    const chat = this.chat(chatId);
    await chat.ready;
    const [note] = await chat.log.where((item) => item.seq === seq && !item.removed);
    return note ? contextOf(note) : { before: [], after: [] };
  }

  /** How many notes `chatId` has (erased ones included: they keep their number). */
  async count(chatId: string): Promise<number> {
    const chat = this.chat(chatId);
    await chat.ready;
    return chat.log.size();
  }

  /** The absolute path of a note's audio file, if it was kept. */
  audioPath(chatId: string, note: ArchivedNote): string | undefined {
    return note.audioFile ? path.join(this.chat(chatId).log.dir, note.audioFile) : undefined;
  }

  /** Waits for pending writes and brings the index snapshots of large months up to date (call at shutdown). */
  async flush(): Promise<void> {
    const { logs, state } = internals.get(this)!;
    await Promise.all([...state.values()].map((chat) => chat.queue));
    await logs.flush();
  }
}

/** Makes sure the archive root exists (so the owner sees where audio is kept). */
export async function ensureArchiveRoot(root: string): Promise<void> {
  await mkdir(root, { recursive: true });
}

/** A chat's state as the module's functions need it (ready: its old-layout files converted). */
async function chatOf(archive: AudioArchive, chatId: string): Promise<ChatState> {
  const chat = (archive as unknown as { chat(id: string): ChatState }).chat(chatId);
  await chat.ready;
  return chat;
}

/** Chat ids that have an archive (privacy export and delete of one person's notes; never used for search). */
export async function archivedChatIds(archive: AudioArchive): Promise<string[]> {
  return internals.get(archive)!.logs.chatIds();
}

/**
 * Converts every chat folder still in the layout of earlier versions now (at the plugin's start), instead of at each
 * chat's first use; a chat whose conversion fails is said in the log and tried again at its first use.
 */
export async function convertOldArchives(archive: AudioArchive): Promise<void> {
  for (const chatId of await archivedChatIds(archive)) await chatOf(archive, chatId).catch(() => internals.get(archive)!.state.delete(chatId));
}

/** The notes of `chatId` that match (privacy export), with their context. */
export async function archivedNotesWhere(archive: AudioArchive, chatId: string, matches: (note: ArchivedNote) => boolean): Promise<Array<ArchivedNote & NoteContext>> {
  const chat = await chatOf(archive, chatId);
  const items = await chat.log.where((item) => !item.removed && matches(noteOf(item)));
  return items.sort((a, b) => a.seq - b.seq).map((item) => ({ ...noteOf(item), ...contextOf(item) }));
}

/**
 * The note message `messageId` of `chatId` became, erased ones too (`removed`: deleted for everyone or with its
 * person's data), or undefined; reads that one chat only. For a reply quoting a voice note.
 */
export async function archivedNoteOf(archive: AudioArchive, chatId: string, messageId: string): Promise<ArchivedNote | undefined> {
  const chat = await chatOf(archive, chatId);
  const [item] = await chat.log.where((i) => i.id === messageId);
  return item ? noteOf(item) : undefined;
}

/**
 * Erases the notes of `chatId` that match (their transcript, audio file, sender and context) and removes matching
 * messages from the context of every other note; the search index and its snapshots forget them. A note keeps its
 * number and message id (so a reply quoting it is told it was erased). Returns how many notes and context messages went.
 */
export async function eraseArchived(archive: AudioArchive, chatId: string, note: (note: ArchivedNote) => boolean, contextMessage: (message: ContextMessage) => boolean): Promise<number> {
  const chat = await chatOf(archive, chatId);
  return serial(chat, async () => {
    const erased = (item: NoteItem) => !item.removed && note(noteOf(item));
    // The audio goes first: a crash afterwards leaves a note whose audio is missing, never audio of an erased note.
    for (const item of await chat.log.where(erased)) if (item.audioFile) await rm(path.join(chat.log.dir, item.audioFile), { force: true });
    let removed = await chat.log.changeWhere(erased, (item) => {
      chat.pending?.delete(item.seq);
      return { id: item.id, seq: item.seq, senderId: '', text: '', at: item.at, kind: item.kind, removed: true };
    });
    const quotes = (item: NoteItem) => !item.removed && [...(item.before ?? []), ...(item.after ?? [])].some(contextMessage);
    const lines = await chat.log.where(quotes);
    for (const item of lines) removed += [...(item.before ?? []), ...(item.after ?? [])].filter(contextMessage).length;
    if (lines.length) {
      await chat.log.changeWhere(quotes, (item) => {
        const before = (item.before ?? []).filter((m) => !contextMessage(m));
        const after = (item.after ?? []).filter((m) => !contextMessage(m));
        // A note still collecting "after" messages counts what it has now.
        if (chat.pending?.has(item.seq)) chat.pending.set(item.seq, after.length);
        const { before: _b, after: _a, ...rest } = item;
        return { ...rest, ...(before.length ? { before } : {}), ...(after.length ? { after } : {}) };
      });
    }
    return removed;
  });
}

/**
 * Gives the context messages of `chatId` that match (an edited message) their new `text`, in every note that keeps
 * them (the month file rewritten atomically: the old words are nowhere on disk). Returns how many changed.
 */
export async function editArchivedContext(archive: AudioArchive, chatId: string, matches: (message: ContextMessage) => boolean, text: string): Promise<number> {
  const chat = await chatOf(archive, chatId);
  return serial(chat, async () => {
    const quotes = (item: NoteItem) => !item.removed && [...(item.before ?? []), ...(item.after ?? [])].some(matches);
    let changed = 0;
    for (const item of await chat.log.where(quotes)) changed += [...(item.before ?? []), ...(item.after ?? [])].filter(matches).length;
    if (!changed) return 0;
    const edit = (list: ContextMessage[] | undefined) => list?.map((m) => (matches(m) ? cleanContext([{ ...m, text }])[0] : m));
    await chat.log.changeWhere(quotes, (item) => ({ ...item, ...(item.before ? { before: edit(item.before) } : {}), ...(item.after ? { after: edit(item.after) } : {}) }));
    return changed;
  });
}

/** Every file under `dir` whose name says it was set aside as corrupt, relative to `dir`. */
async function setAsideFiles(dir: string): Promise<string[]> {
  const names = (await readdir(dir, { recursive: true }).catch(() => [] as string[])) as string[];
  return names.filter((name) => path.basename(name).includes('.corrupt-'));
}

/**
 * A private chat is known as `to` from now on (WhatsApp moved it from its LID to the phone number): the notes of
 * `from` join the archive of `to` — audio copied under `to`'s folder first, numbered after the notes `to` already has
 * (whose numbers never change), then the notes' lines added to `to`'s log (which makes them visible), and only then is
 * `from`'s folder removed. A note `to` already holds (same message id and time) is not taken twice, so a move cut short
 * by a crash is finished by the next one without duplicates. Notes erased earlier hold nothing and stay behind; files
 * set aside as corrupt move along, bytes kept. Returns how many notes moved.
 */
export async function moveArchivedChat(archive: AudioArchive, from: string, to: string): Promise<number> {
  if (from === to) return 0;
  const { logs, state } = internals.get(archive)!;
  const source = await chatOf(archive, from);
  const target = await chatOf(archive, to);
  const moved = await serial(source, () =>
    serial(target, async () => {
      const key = (n: NoteItem) => `${n.id}\n${n.at}`;
      const held = new Set((await target.log.where(() => true)).map(key));
      const notes = (await source.log.where((n) => !n.removed && !held.has(key(n)))).sort((a, b) => a.seq - b.seq);
      const sourcePending = await pendingOf(source);
      let seq = await nextSeq(target);
      const added: NoteItem[] = [];
      const waiting = new Map<number, number>();
      for (const old of notes) {
        const note: NoteItem = { ...old, seq };
        delete note.audioFile;
        if (old.audioFile) {
          const audioFile = path.join('audio', `${seq}${path.extname(old.audioFile)}`);
          const bytes = await readFile(path.join(source.log.dir, old.audioFile)).catch((err: NodeJS.ErrnoException) => {
            if (err.code === 'ENOENT') return undefined; // gone already: the transcript still moves
            throw err;
          });
          if (bytes) {
            await writeFileAtomicSafe(path.join(target.log.dir, audioFile), bytes);
            note.audioFile = audioFile;
          }
        }
        if (sourcePending.has(old.seq)) waiting.set(seq, sourcePending.get(old.seq)!);
        added.push(note);
        seq++;
      }
      await target.log.addMany(added);
      target.nextSeq = seq;
      if (target.pending) for (const [n, count] of waiting) target.pending.set(n, count);
      for (const name of await setAsideFiles(source.log.dir)) {
        await mkdir(path.dirname(path.join(target.log.dir, name)), { recursive: true });
        await rename(path.join(source.log.dir, name), path.join(target.log.dir, name));
      }
      await logs.dropChat(from);
      return added.length;
    }),
  );
  // The next use of `from` starts from its (now missing) folder, not from notes that moved.
  state.delete(from);
  return moved;
}
