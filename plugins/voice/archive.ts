import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Index } from 'flexsearch';
import { checkDocument, healthFor, safeFileName, writeFileAtomicSafe, writeJsonAtomic } from '../../core/storage.js';
import { ARCHIVE_SEGMENT_SCHEMA } from './schemas.js';

/** How many messages before and after a voice note are kept with it. */
export const CONTEXT_SIZE = 6;
/** Notes per segment file: adding a note rewrites one small file, loading 100,000 notes reads 100. */
export const SEGMENT_SIZE = 1000;
/** Chats with at least this many notes keep a snapshot of their search index, so loading them needs no re-indexing. */
export const SNAPSHOT_MIN_NOTES = 2000;
/** A snapshot is refreshed once this many notes were added since the last one. */
export const SNAPSHOT_EVERY = 500;
const SNAPSHOT_FORMAT = 'flexsearch-0.8/1';

/** One chat message kept as context around a voice note. */
export interface ContextMessage {
  id: string;
  senderId: string;
  senderName?: string;
  /** Unix ms. */
  at: number;
  text: string;
}

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

/** An archived voice note (without its context, which lives in its own file). */
export interface ArchivedNote {
  /** Position in its chat's archive, from 1. */
  seq: number;
  messageId: string;
  senderId: string;
  senderName?: string;
  at: number;
  transcript: string;
  kind: 'voice' | 'audio';
  /** The audio file, relative to the chat's archive folder. */
  audioFile?: string;
  /** Erased (deleted for everyone, or a privacy delete): the number stays, the content is gone. */
  removed?: boolean;
}

export interface NoteContext {
  before: ContextMessage[];
  after: ContextMessage[];
}

/** One search result: the note and a short quote around the words that matched. */
export interface SearchHit {
  note: ArchivedNote;
  quote: string;
}

interface SegmentFile {
  chatId: string;
  notes: ArchivedNote[];
}

/** The manifest of an index snapshot; the parts are raw FlexSearch export files in `dir` (no double JSON). */
interface SnapshotFile {
  chatId: string;
  format: string;
  covers: number;
  dir: string;
  keys: string[];
}

/** Per query word, how many of its best matches are fused (enough to hold every match of a rare word). */
const PER_TERM = 400;
const MAX_QUERY_TERMS = 8;

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function cleanContext(list: ContextMessage[] | undefined): ContextMessage[] {
  return (list ?? []).slice(-CONTEXT_SIZE).map((m) => ({ id: String(m.id), senderId: String(m.senderId), ...(m.senderName ? { senderName: m.senderName } : {}), at: Number(m.at), text: clip(String(m.text ?? ''), 500) }));
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Reads one segment file, checked against its schema: a file that does not parse or does not match is moved aside
 * (bytes kept, reported) and its notes are left out, never allowed to break the chat's archive.
 */
async function readSegment(file: string): Promise<SegmentFile | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let reason: string;
  try {
    const checked = checkDocument(ARCHIVE_SEGMENT_SCHEMA, JSON.parse(text));
    if (checked.ok) return checked.value as unknown as SegmentFile;
    reason = checked.reason;
  } catch (err) {
    reason = `not valid JSON: ${(err as Error).message}`;
  }
  const movedTo = `${file}.corrupt-${Date.now()}`;
  await rename(file, movedTo);
  healthFor(file).corrupt(file, movedTo, reason);
  return undefined;
}

/** A short quote of `text` around the first word of `query` it contains. */
export function quoteAround(text: string, query: string, width = 160): string {
  if (text.length <= width) return text;
  const lower = text.toLowerCase();
  const words = query.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 1);
  const at = words.map((w) => lower.indexOf(w)).filter((i) => i >= 0).sort((a, b) => a - b)[0] ?? 0;
  const start = Math.max(0, Math.min(at - Math.floor(width / 3), text.length - width));
  return `${start > 0 ? '…' : ''}${text.slice(start, start + width).trim()}${start + width < text.length ? '…' : ''}`;
}

/**
 * Ranks notes for a query of several words: each word is looked up on its own (fast in FlexSearch even for words in
 * every note) and the lists are fused, a word weighing more the fewer notes it is in (idf). Searching all words at
 * once makes FlexSearch intersect huge lists for common words; this keeps a 100,000-note chat in single-digit ms.
 */
function fusedSearch(index: Index, query: string, limit: number, total: number): number[] {
  const terms = [...new Set(query.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean))].slice(0, MAX_QUERY_TERMS);
  if (terms.length <= 1) return index.search(query, { limit, suggest: true }) as number[];
  const scores = new Map<number, number>();
  for (const term of terms) {
    const ids = index.search(term, { limit: PER_TERM }) as number[];
    if (!ids.length) continue;
    const idf = Math.log(1 + total / ids.length);
    ids.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + idf * (1 + 0.1 / (1 + rank))));
  }
  return [...scores].sort((a, b) => b[1] - a[1] || b[0] - a[0]).slice(0, limit).map(([id]) => id);
}

/** One chat's archive: its folder, notes, search index and the notes still waiting for their "after" messages. */
class ChatArchive {
  notes: ArchivedNote[] = [];
  readonly pending = new Map<number, NoteContext>();
  private index: Index | undefined;
  private indexed = 0;
  private snapshotCovers = 0;
  private loaded: Promise<void> | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly chatId: string, readonly dir: string) {}

  /** Runs mutations of this chat one after another. */
  serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  load(): Promise<void> {
    this.loaded ??= this.readAll().catch((err) => {
      this.loaded = undefined;
      throw err;
    });
    return this.loaded;
  }

  private async readAll(): Promise<void> {
    let files: string[] = [];
    try {
      files = (await readdir(path.join(this.dir, 'notes'))).filter((f) => /^\d+\.json$/.test(f)).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const segments = await Promise.all(files.map((f) => readSegment(path.join(this.dir, 'notes', f))));
    // A segment of another chat (a file-name collision or a copied file) is never read into this chat.
    this.notes = segments.filter((s) => s && s.chatId === this.chatId && Array.isArray(s.notes)).flatMap((s) => s!.notes).sort((a, b) => a.seq - b.seq);
    for (const note of this.notes.slice(-CONTEXT_SIZE)) {
      const context = await this.readContext(note.seq);
      if (context.after.length < CONTEXT_SIZE) this.pending.set(note.seq, context);
    }
  }

  /** The search index, built lazily (from the snapshot when there is one). */
  async searchIndex(): Promise<Index> {
    if (!this.index) {
      const index = new Index({ tokenize: 'strict', resolution: 9 });
      const snapshot = this.notes.length >= SNAPSHOT_MIN_NOTES ? await readJson<SnapshotFile>(this.snapshotFile()).catch(() => undefined) : undefined;
      if (snapshot && snapshot.chatId === this.chatId && snapshot.format === SNAPSHOT_FORMAT && snapshot.covers <= this.notes.length && /^index-[\w-]+$/.test(snapshot.dir)) {
        try {
          const parts = await Promise.all(snapshot.keys.map((key, i) => readFile(path.join(this.dir, snapshot.dir, `${i}.part`), 'utf8').then((data) => [key, data] as const)));
          for (const [key, data] of parts) index.import(key, data);
          this.indexed = snapshot.covers;
          this.snapshotCovers = snapshot.covers;
        } catch {
          this.indexed = 0;
        }
      }
      this.index = this.indexed ? index : new Index({ tokenize: 'strict', resolution: 9 });
      for (const note of this.notes.slice(this.indexed)) this.index.add(note.seq, note.transcript);
      this.indexed = this.notes.length;
    }
    return this.index;
  }

  private snapshotFile(): string {
    return path.join(this.dir, 'search-index.json');
  }

  contextFile(seq: number): string {
    return path.join(this.dir, 'context', `${seq}.json`);
  }

  async readContext(seq: number): Promise<NoteContext> {
    const doc = await readJson<NoteContext>(this.contextFile(seq)).catch(() => undefined);
    return { before: Array.isArray(doc?.before) ? doc!.before : [], after: Array.isArray(doc?.after) ? doc!.after : [] };
  }

  async writeSegment(segment: number): Promise<void> {
    const notes = this.notes.slice(segment * SEGMENT_SIZE, (segment + 1) * SEGMENT_SIZE);
    const file: SegmentFile = { chatId: this.chatId, notes };
    // Compact JSON: a large chat loads 100 of these at start.
    await writeFileAtomicSafe(path.join(this.dir, 'notes', `${String(segment).padStart(6, '0')}.json`), JSON.stringify({ version: ARCHIVE_SEGMENT_SCHEMA.version, ...file }));
  }

  /** Forgets the search index and its snapshot (after notes were erased): the next search rebuilds it. */
  async dropIndex(): Promise<void> {
    this.index = undefined;
    this.indexed = 0;
    this.snapshotCovers = 0;
    await rm(this.snapshotFile(), { force: true });
    for (const entry of await readdir(this.dir).catch(() => [] as string[])) {
      if (entry.startsWith('index-')) await rm(path.join(this.dir, entry), { recursive: true, force: true });
    }
  }

  indexNote(note: ArchivedNote): void {
    if (this.index && this.indexed === note.seq - 1) {
      this.index.add(note.seq, note.transcript);
      this.indexed = note.seq;
    }
  }

  /** Writes the index snapshot when the chat is large and enough notes came since the last one. */
  async maybeSnapshot(force = false): Promise<void> {
    if (this.notes.length < SNAPSHOT_MIN_NOTES) return;
    if (this.notes.length - this.snapshotCovers < (force ? 1 : SNAPSHOT_EVERY)) return;
    const index = await this.searchIndex();
    const parts: Array<[string, string]> = [];
    await index.export((key: string, data: string) => {
      parts.push([String(key), data]);
    });
    // Parts go to a fresh folder; the manifest written last (atomically) switches to it, then older folders go.
    const dir = `index-${this.indexed}-${Date.now().toString(36)}`;
    for (const [i, [, data]] of parts.entries()) await writeFileAtomicSafe(path.join(this.dir, dir, `${i}.part`), data);
    const snapshot: SnapshotFile = { chatId: this.chatId, format: SNAPSHOT_FORMAT, covers: this.indexed, dir, keys: parts.map(([key]) => key) };
    await writeJsonAtomic(this.snapshotFile(), snapshot);
    for (const entry of await readdir(this.dir)) {
      if (entry.startsWith('index-') && entry !== dir) await rm(path.join(this.dir, entry), { recursive: true, force: true });
    }
    this.snapshotCovers = snapshot.covers;
  }
}

function requireChatId(chatId: string): string {
  if (typeof chatId !== 'string' || !chatId.trim()) throw new TypeError('AudioArchive: a chat id is required');
  return chatId;
}

/**
 * The local audio archive, `data/audio_archive/<chat>/`: per chat, the audio files, their transcripts (in segment
 * files of SEGMENT_SIZE notes), each note's 6 messages before and after (`context/<seq>.json`, the "after" ones
 * filled in as they arrive) and a full-text index (FlexSearch) kept in memory and loaded lazily.
 *
 * Search is per chat by construction: every call takes the chat id, each chat has its own folder and index, and
 * there is no call that reads more than one chat. Every JSON write is atomic; a note becomes visible only after its
 * audio and context are written, so a failure never leaves half a note.
 *
 * @example
 * const archive = new AudioArchive('data/audio_archive');
 * await archive.add('123@g.us', { messageId: 'm1', senderId: '62…@s.whatsapp.net', at: Date.now(), transcript: 'the invoice is paid' });
 * const hits = await archive.search('123@g.us', 'invoice', 5);
 */
export class AudioArchive {
  private readonly chats = new Map<string, ChatArchive>();

  constructor(readonly root: string) {}

  private chat(chatId: string): ChatArchive {
    requireChatId(chatId);
    let chat = this.chats.get(chatId);
    if (!chat) {
      chat = new ChatArchive(chatId, path.join(this.root, safeFileName(chatId)));
      this.chats.set(chatId, chat);
    }
    return chat;
  }

  /** Loads a chat's notes and search index now (otherwise done on first use). */
  async load(chatId: string): Promise<void> {
    const chat = this.chat(chatId);
    await chat.load();
    await chat.searchIndex();
  }

  /** Archives one voice note in `chatId`. */
  async add(chatId: string, input: NoteInput): Promise<ArchivedNote> {
    const [note] = await this.addMany(chatId, [input]);
    return note;
  }

  /** Archives several notes at once (imports and the benchmark): each touched segment is written once. */
  async addMany(chatId: string, inputs: NoteInput[]): Promise<ArchivedNote[]> {
    const chat = this.chat(chatId);
    await chat.load();
    return chat.serial(async () => {
      const added: ArchivedNote[] = [];
      const segments = new Set<number>();
      for (const input of inputs) {
        const seq = chat.notes.length + added.length + 1;
        const note: ArchivedNote = {
          seq,
          messageId: String(input.messageId),
          senderId: String(input.senderId),
          ...(input.senderName ? { senderName: input.senderName } : {}),
          at: Number(input.at),
          transcript: String(input.transcript),
          kind: input.kind ?? 'voice',
        };
        if (input.audio) {
          const ext = input.audio.ext.replace(/[^a-z0-9]/gi, '').slice(0, 8) || 'bin';
          note.audioFile = path.join('audio', `${seq}.${ext}`);
          await writeFileAtomicSafe(path.join(chat.dir, note.audioFile), input.audio.bytes);
        }
        const context: NoteContext = { before: cleanContext(input.before), after: [] };
        if (input.before?.length || inputs.length === 1) {
          await writeJsonAtomic(chat.contextFile(seq), context);
        }
        added.push(note);
        segments.add(Math.floor((seq - 1) / SEGMENT_SIZE));
      }
      // The segment write makes the notes visible; audio and context are already on disk.
      const before = chat.notes.length;
      chat.notes.push(...added);
      try {
        for (const segment of segments) await chat.writeSegment(segment);
      } catch (err) {
        chat.notes.length = before;
        throw err;
      }
      for (const note of added) {
        chat.indexNote(note);
        if (inputs.length === 1) chat.pending.set(note.seq, { before: cleanContext(inputs[0].before), after: [] });
      }
      await chat.maybeSnapshot();
      return added;
    });
  }

  /**
   * Records a message of `chatId` as "after" context of the notes still waiting for theirs (fewer than 6).
   * A note's own message is never its own context.
   */
  async observe(chatId: string, message: ContextMessage): Promise<void> {
    const chat = this.chat(chatId);
    await chat.load();
    if (!chat.pending.size) return;
    await chat.serial(async () => {
      for (const [seq, context] of [...chat.pending]) {
        const note = chat.notes[seq - 1];
        if (!note || note.messageId === message.id) continue;
        context.after.push(...cleanContext([message]));
        await writeJsonAtomic(chat.contextFile(seq), context);
        if (context.after.length >= CONTEXT_SIZE) chat.pending.delete(seq);
      }
    });
  }

  /** Up to `limit` notes of `chatId` that match `query`, best first, with a short quote. Only that chat is searched. */
  async search(chatId: string, query: string, limit = 5): Promise<SearchHit[]> {
    const chat = this.chat(chatId);
    const words = String(query ?? '').trim();
    if (!words) return [];
    await chat.load();
    if (!chat.notes.length) return [];
    const index = await chat.searchIndex();
    const max = Math.max(1, Math.min(50, Math.floor(limit) || 5));
    const ids = fusedSearch(index, words, max, chat.notes.length);
    return ids
      .map((seq) => chat.notes[Number(seq) - 1])
      .filter((note): note is ArchivedNote => Boolean(note) && !note.removed)
      .map((note) => ({ note, quote: quoteAround(note.transcript, words) }));
  }

  /** The 6 messages before and (so far) after a note of `chatId`. */
  async context(chatId: string, seq: number): Promise<NoteContext> {
    const chat = this.chat(chatId);
    await chat.load();
    if (!chat.notes[seq - 1]) return { before: [], after: [] };
    return chat.readContext(seq);
  }

  /** How many notes `chatId` has. */
  async count(chatId: string): Promise<number> {
    const chat = this.chat(chatId);
    await chat.load();
    return chat.notes.length;
  }

  /** The absolute path of a note's audio file, if it was kept. */
  audioPath(chatId: string, note: ArchivedNote): string | undefined {
    return note.audioFile ? path.join(this.chat(chatId).dir, note.audioFile) : undefined;
  }

  /** Waits for pending writes and refreshes the index snapshots of large chats (call at shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.chats.values()].map((chat) => chat.serial(() => chat.maybeSnapshot(true))));
  }
}

/** Makes sure the archive root exists (so the owner sees where audio is kept). */
export async function ensureArchiveRoot(root: string): Promise<void> {
  await mkdir(root, { recursive: true });
}

/**
 * The privacy controls' access to the archive (`.mydata` export and delete, messages deleted for everyone). Kept out
 * of the AudioArchive class on purpose: the class's API stays "one chat at a time, search only within it".
 */
const chatOf = (archive: AudioArchive, chatId: string): ChatArchive => (archive as unknown as { chat(id: string): ChatArchive }).chat(chatId);

/** Chat ids that have an archive (privacy export and delete of one person's notes; never used for search). */
export async function archivedChatIds(archive: AudioArchive): Promise<string[]> {
  const names = await readdir(archive.root).catch(() => [] as string[]);
  return names.map((n) => decodeURIComponent(n));
}

/** The notes of `chatId` that match (privacy export), with their context. */
export async function archivedNotesWhere(archive: AudioArchive, chatId: string, matches: (note: ArchivedNote) => boolean): Promise<Array<ArchivedNote & NoteContext>> {
  const chat = chatOf(archive, chatId);
  await chat.load();
  const out: Array<ArchivedNote & NoteContext> = [];
  for (const note of chat.notes) if (!note.removed && matches(note)) out.push({ ...note, ...(await chat.readContext(note.seq)) });
  return out;
}

/**
 * The note message `messageId` of `chatId` became, erased ones too (`removed`: deleted for everyone or with its
 * person's data), or undefined; reads that one chat only. For a reply quoting a voice note.
 */
export async function archivedNoteOf(archive: AudioArchive, chatId: string, messageId: string): Promise<ArchivedNote | undefined> {
  const chat = chatOf(archive, chatId);
  await chat.load();
  return chat.notes.find((n) => n.messageId === messageId);
}

/**
 * Erases the notes of `chatId` that match (their transcript, audio file, sender and context) and removes matching
 * messages from the context of every other note; the search index is rebuilt without them. A note keeps its number,
 * so the other notes keep theirs. Returns how many notes and context messages went.
 */
export async function eraseArchived(archive: AudioArchive, chatId: string, note: (note: ArchivedNote) => boolean, contextMessage: (message: ContextMessage) => boolean): Promise<number> {
  const chat = chatOf(archive, chatId);
  await chat.load();
  return chat.serial(async () => {
    let removed = 0;
    const segments = new Set<number>();
    for (const n of chat.notes) {
      if (n.removed || !note(n)) continue;
      if (n.audioFile) await rm(path.join(chat.dir, n.audioFile), { force: true });
      await rm(chat.contextFile(n.seq), { force: true });
      chat.pending.delete(n.seq);
      Object.assign(n, { transcript: '', senderId: '', removed: true });
      delete n.senderName;
      delete n.audioFile;
      segments.add(Math.floor((n.seq - 1) / SEGMENT_SIZE));
      removed++;
    }
    for (const n of chat.notes) {
      if (n.removed) continue;
      const context = await chat.readContext(n.seq);
      const before = context.before.filter((m) => !contextMessage(m));
      const after = context.after.filter((m) => !contextMessage(m));
      const gone = context.before.length + context.after.length - before.length - after.length;
      if (!gone) continue;
      removed += gone;
      const cleaned = { before, after };
      await writeJsonAtomic(chat.contextFile(n.seq), cleaned);
      if (chat.pending.has(n.seq)) chat.pending.set(n.seq, cleaned);
    }
    for (const segment of segments) await chat.writeSegment(segment);
    if (segments.size) await chat.dropIndex();
    return removed;
  });
}

/**
 * Gives the context messages of `chatId` that match (an edited message) their new `text`, in every note's context
 * file (rewritten atomically: the old words are nowhere on disk). Returns how many changed.
 */
export async function editArchivedContext(archive: AudioArchive, chatId: string, matches: (message: ContextMessage) => boolean, text: string): Promise<number> {
  const chat = chatOf(archive, chatId);
  await chat.load();
  return chat.serial(async () => {
    let changed = 0;
    const edit = (list: ContextMessage[]) =>
      list.map((m) => {
        if (!matches(m)) return m;
        changed++;
        return { ...m, text: cleanContext([{ ...m, text }])[0].text };
      });
    for (const n of chat.notes) {
      if (n.removed) continue;
      const before = changed;
      const context = await chat.readContext(n.seq);
      const edited = { before: edit(context.before), after: edit(context.after) };
      if (changed === before) continue;
      await writeJsonAtomic(chat.contextFile(n.seq), edited);
      if (chat.pending.has(n.seq)) chat.pending.set(n.seq, edited);
    }
    return changed;
  });
}

/**
 * A private chat is known as `to` from now on (WhatsApp moved it from its LID to the phone number): the notes of
 * `from` join the archive of `to` — audio, transcript and context copied under `to`'s folder (atomically, each),
 * numbered after the notes `to` already has (whose numbers never change), then made visible by writing `to`'s segment
 * files, and only then is `from`'s folder removed. A note `to` already holds (same message id and time) is not taken
 * twice, so a move cut short by a crash is finished by the next one without duplicates. Notes erased earlier hold
 * nothing and stay behind; segments set aside as corrupt move along, bytes kept. Returns how many notes moved.
 */
export async function moveArchivedChat(archive: AudioArchive, from: string, to: string): Promise<number> {
  if (from === to) return 0;
  const source = chatOf(archive, from);
  const target = chatOf(archive, to);
  await source.load();
  await target.load();
  const moved = await source.serial(() =>
    target.serial(async () => {
      const key = (n: ArchivedNote) => `${n.messageId}\n${n.at}`;
      const held = new Set(target.notes.map(key));
      const added: ArchivedNote[] = [];
      const waiting = new Map<number, NoteContext>();
      for (const old of source.notes) {
        if (old.removed || held.has(key(old))) continue;
        const seq = target.notes.length + added.length + 1;
        const note: ArchivedNote = { ...old, seq };
        delete note.audioFile;
        if (old.audioFile) {
          const bytes = await readFile(path.join(source.dir, old.audioFile)).catch((err: NodeJS.ErrnoException) => {
            if (err.code === 'ENOENT') return undefined; // gone already: the transcript still moves
            throw err;
          });
          if (bytes) {
            note.audioFile = path.join('audio', `${seq}${path.extname(old.audioFile)}`);
            await writeFileAtomicSafe(path.join(target.dir, note.audioFile), bytes);
          }
        }
        const context = await source.readContext(old.seq);
        await writeJsonAtomic(target.contextFile(seq), context);
        const pending = source.pending.get(old.seq);
        if (pending) waiting.set(seq, pending);
        added.push(note);
      }
      if (added.length) {
        const before = target.notes.length;
        target.notes.push(...added);
        try {
          for (const segment of new Set(added.map((n) => Math.floor((n.seq - 1) / SEGMENT_SIZE)))) await target.writeSegment(segment);
        } catch (err) {
          target.notes.length = before;
          throw err;
        }
        for (const note of added) target.indexNote(note);
        for (const [seq, context] of waiting) target.pending.set(seq, context);
      }
      const notesDir = path.join(source.dir, 'notes');
      for (const name of await readdir(notesDir).catch(() => [] as string[])) {
        if (!name.includes('.corrupt-')) continue;
        await mkdir(path.join(target.dir, 'notes'), { recursive: true });
        await rename(path.join(notesDir, name), path.join(target.dir, 'notes', name));
      }
      await rm(source.dir, { recursive: true, force: true });
      return added.length;
    }),
  );
  // The next use of `from` starts from its (now missing) folder, not from notes that moved.
  (archive as unknown as { chats: Map<string, ChatArchive> }).chats.delete(from);
  return moved;
}
