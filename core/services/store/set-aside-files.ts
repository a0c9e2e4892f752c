import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { safeFileName } from './atomic.js';
import { isPrivateChatOf, type PersonIds } from './privacy.js';

/** How every store names a file it set aside because it could not be read: `<name>.corrupt-<time>`. */
const SET_ASIDE = /\.corrupt-[0-9][0-9A-Za-z-]*$/;

/** Folders never searched: the WhatsApp session (no chat's words) and the workspaces' own files (people's files, any names). */
const NOT_SEARCHED = new Set(['session_auth', path.join('workspaces', 'files')]);

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
 * @example
 * const setAside = new SetAsideFiles(dataDir);
 * await setAside.deleteFor(['15550001111@s.whatsapp.net', '98765@lid']); // how many files went
 */
export class SetAsideFiles {
  constructor(private readonly dataDir: string) {}

  /** Every set-aside file under the data folder whose path names the chat `chatId`. */
  private async filesOf(chatIds: string[]): Promise<SetAsideFile[]> {
    const names = new Set(chatIds.map(safeFileName));
    const found: SetAsideFile[] = [];
    for (const relative of await this.all()) {
      const segments = relative.split(path.sep);
      segments.forEach((segment, index) => {
        const chatName = [...names].find((n) => segment === n || segment.startsWith(`${n}.`));
        if (chatName && !found.some((f) => f.relative === relative)) found.push({ relative, chatSegment: { index, chatName } });
      });
    }
    return found;
  }

  private async all(): Promise<string[]> {
    const out: string[] = [];
    const walk = async (relative: string, depth: number): Promise<void> => {
      if (depth > MAX_DEPTH || out.length >= MAX_FILES || NOT_SEARCHED.has(relative)) return;
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
    for (const { relative } of files) await rm(path.join(this.dataDir, relative), { force: true });
    return files.length;
  }

  /**
   * Renames the set-aside files still under `from` to `to` (after the stores moved the rest: a store that takes its
   * own set-aside files along leaves nothing here). A name already taken under `to` gets a suffix: nothing is overwritten.
   */
  async moveChat(from: string, to: string): Promise<void> {
    const target = safeFileName(to);
    for (const { relative, chatSegment } of await this.filesOf([from])) {
      const segments = relative.split(path.sep);
      segments[chatSegment.index] = target + segments[chatSegment.index].slice(chatSegment.chatName.length);
      let moved = path.join(this.dataDir, ...segments);
      await mkdir(path.dirname(moved), { recursive: true });
      for (let n = 1; await exists(moved); n++) moved = `${path.join(this.dataDir, ...segments)}-${n}`;
      await rename(path.join(this.dataDir, relative), moved);
    }
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
