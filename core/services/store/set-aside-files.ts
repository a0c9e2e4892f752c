import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { safeFileName } from '../../api/file-name.js';
import type { DataHealth } from './data-health.js';
import { isPrivateChatOf } from './privacy.js';
import type { PersonIds } from '../../kernel/port/privacy-participant.js';

/** How every store names a file it set aside because it could not be read: `<name>.corrupt-<time>`. */
const SET_ASIDE = /\.corrupt-[0-9][0-9A-Za-z-]*$/;

/** Folders never searched: the WhatsApp session (no chat's words) and the workspaces' own files (people's files, any names). */
const NOT_SEARCHED = ['session_auth', path.join('workspaces', 'files')];

/** How deep and how many: the data folder's stores keep chats at most three folders down. */
const MAX_DEPTH = 5;
const MAX_FILES = 10_000;

/** At most this much of one set-aside file is put in an export as text (the rest is said, not sent). */
const EXPORT_BYTES = 1024 * 1024;

/** One set-aside file, relative to the data folder, and the chat it belonged to. */
interface SetAsideFile {
  relative: string;
  chatSegment: { index: number; chatName: string };
}

/**
 * Files that the stores set aside as unreadable (`<name>.corrupt-<time>`, bytes kept for the owner) still hold the
 * chat's words, so they follow the chat like the rest of its data: a person's delete removes the ones of their private
 * chat, their export lists them, and a private chat moving from its LID to its phone id takes them along. Which chat a
 * file belongs to is read from its path (every per-chat store names a file or folder after `safeFileName(chatId)`).
 * A group's set-aside file cannot be cut by person and stays for the owner (it is listed on the dashboard's data view).
 *
 * The files are kept in an index rather than searched for at each export, delete and move: one walk of the data folder
 * at start finds those set aside in earlier runs (`load`), and the data health tells of each one set aside since.
 *
 * @example
 * const setAside = new SetAsideFiles(dataDir, health);
 * await setAside.deleteFor(['15550001111@s.whatsapp.net', '98765@lid']); // how many files went
 */
export class SetAsideFiles {
  /** The set-aside files known, relative to the data folder (one may have gone since: each use checks). */
  readonly #known = new Set<string>();
  #walked: Promise<void> | undefined;
  readonly #stopListening: (() => void) | undefined;

  constructor(
    private readonly dataDir: string,
    health?: DataHealth,
  ) {
    this.#stopListening = health?.onSetAside(({ movedTo }) => this.note(movedTo));
  }

  /** Finds the files set aside in earlier runs: one walk of the data folder, at start (else at the first use). */
  load(): Promise<void> {
    return (this.#walked ??= this.walk().then((found) => {
      for (const relative of found) this.#known.add(relative);
    }));
  }

  /** Stops following the data health; resolves once the start's walk is over. */
  async close(): Promise<void> {
    this.#stopListening?.();
    await this.#walked;
  }

  /** A store set `file` aside just now. */
  private note(file: string): void {
    const relative = path.relative(path.resolve(this.dataDir), path.resolve(file));
    if (!relative || relative.startsWith('..') || path.isAbsolute(relative) || !SET_ASIDE.test(path.basename(relative))) return;
    if (NOT_SEARCHED.some((folder) => relative.startsWith(folder + path.sep))) return;
    this.#known.add(relative);
  }

  /** Every set-aside file still there whose path names one of the chats `chatIds`. */
  private async filesOf(chatIds: string[]): Promise<SetAsideFile[]> {
    await this.load();
    const names = chatIds.map(safeFileName);
    const found: SetAsideFile[] = [];
    for (const relative of [...this.#known]) {
      const chatSegment = chatSegmentOf(relative, names);
      if (!chatSegment) continue;
      // A store may have removed it since (its chat's delete): the index forgets it.
      if (!(await exists(path.join(this.dataDir, relative)))) {
        this.#known.delete(relative);
        continue;
      }
      found.push({ relative, chatSegment });
    }
    return found;
  }

  private async walk(): Promise<string[]> {
    const out: string[] = [];
    const walk = async (relative: string, depth: number): Promise<void> => {
      if (depth > MAX_DEPTH || out.length >= MAX_FILES || NOT_SEARCHED.includes(relative)) return;
      const entries = await readdir(path.join(this.dataDir, relative), { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        const child = relative ? path.join(relative, entry.name) : entry.name;
        if (entry.isDirectory()) await walk(child, depth + 1);
        else if (entry.isFile() && SET_ASIDE.test(entry.name) && out.length < MAX_FILES) out.push(child);
      }
    };
    await walk('', 0);
    return out;
  }

  private personChats(person: PersonIds): string[] {
    // The person's private chat under each of their ids (a chat id is the person's id without a device).
    return person.filter((id) => isPrivateChatOf(id, person));
  }

  /** The set-aside files of the person's private chat: their place and, up to 1 MB each, their text. */
  async exportFor(person: PersonIds): Promise<Array<{ file: string; bytes: number; text?: string }>> {
    const out: Array<{ file: string; bytes: number; text?: string }> = [];
    for (const { relative } of await this.filesOf(this.personChats(person))) {
      const full = path.join(this.dataDir, relative);
      const bytes = (await stat(full)).size;
      out.push({ file: relative, bytes, ...(bytes <= EXPORT_BYTES ? { text: await readFile(full, 'utf8') } : {}) });
    }
    return out;
  }

  /** Removes the set-aside files of the person's private chat; how many went. */
  async deleteFor(person: PersonIds): Promise<number> {
    const files = await this.filesOf(this.personChats(person));
    for (const { relative } of files) {
      await rm(path.join(this.dataDir, relative), { force: true });
      this.#known.delete(relative);
    }
    return files.length;
  }

  /**
   * Renames the set-aside files still under `from` to `to`. A store that takes its own set-aside files along went
   * first: such a file is then found under `to` and kept in the index there. A name already taken under `to` gets a
   * suffix: nothing is overwritten.
   */
  async moveChat(from: string, to: string): Promise<void> {
    await this.load();
    const fromName = safeFileName(from);
    const target = safeFileName(to);
    for (const relative of [...this.#known]) {
      const chatSegment = chatSegmentOf(relative, [fromName]);
      if (!chatSegment) continue;
      const segments = relative.split(path.sep);
      segments[chatSegment.index] = target + segments[chatSegment.index].slice(chatSegment.chatName.length);
      this.#known.delete(relative);
      if (!(await exists(path.join(this.dataDir, relative)))) {
        // Moved by its store to the same name under the new id (or removed).
        if (await exists(path.join(this.dataDir, ...segments))) this.#known.add(path.join(...segments));
        continue;
      }
      let moved = path.join(this.dataDir, ...segments);
      await mkdir(path.dirname(moved), { recursive: true });
      for (let n = 1; await exists(moved); n++) moved = `${path.join(this.dataDir, ...segments)}-${n}`;
      await rename(path.join(this.dataDir, relative), moved);
      this.#known.add(path.relative(this.dataDir, moved));
    }
  }
}

/** The first folder or file name of `relative` that is one of the chats `names` (the name, or the name and an ending). */
function chatSegmentOf(relative: string, names: string[]): SetAsideFile['chatSegment'] | undefined {
  const segments = relative.split(path.sep);
  for (const [index, segment] of segments.entries()) {
    const chatName = names.find((n) => segment === n || segment.startsWith(`${n}.`));
    if (chatName) return { index, chatName };
  }
  return undefined;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
