/** Longest workspace-relative file name, and longest single part of it. */
export const MAX_PATH_CHARS = 200;
export const MAX_PART_CHARS = 100;
export const MAX_DEPTH = 8;

const PART = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

/** A file name that cannot be used, with a reason a user understands. */
export class BadFileName extends Error {}

/**
 * Checks a file name given by a user or the model and returns it in canonical form (`dir/file.py`).
 * Allowed: relative names made of letters, digits, `_`, `-` and `.`, folders separated by `/`. Refused: absolute
 * paths, `..`/`.`, empty parts, dotfiles (they are never served and keep `.env`-like names out), NUL and other
 * control characters, backslashes, over-long names and deep nesting.
 *
 * @example checkFileName('site/index.html') // 'site/index.html'
 * @example checkFileName('../../x') // throws BadFileName
 */
export function checkFileName(raw: unknown): string {
  if (typeof raw !== 'string') throw new BadFileName('the file name must be text');
  const name = raw.trim();
  if (!name) throw new BadFileName('the file name is empty');
  if (name.length > MAX_PATH_CHARS) throw new BadFileName(`the file name is too long (over ${MAX_PATH_CHARS} characters)`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new BadFileName('the file name contains control characters');
  if (name.includes('\\')) throw new BadFileName('use / (not \\) between folders');
  if (name.startsWith('/') || name.startsWith('~')) throw new BadFileName('absolute paths are not allowed: give a name inside your workspace, like main.py');
  const parts = name.split('/');
  if (parts.length > MAX_DEPTH) throw new BadFileName(`folders may be nested at most ${MAX_DEPTH} deep`);
  for (const part of parts) {
    if (part === '..' || part === '.') throw new BadFileName('".." and "." are not allowed in file names');
    if (!part) throw new BadFileName('the file name has an empty part (//, or a trailing /)');
    if (part.startsWith('.')) throw new BadFileName('names starting with a dot are not allowed');
    if (part.length > MAX_PART_CHARS) throw new BadFileName(`a part of the file name is too long (over ${MAX_PART_CHARS} characters)`);
    if (!PART.test(part)) throw new BadFileName(`"${part.slice(0, 40)}" has characters I do not accept: use letters, digits, _, - and .`);
  }
  return parts.join('/');
}

/**
 * Characters that make a name show something other than what it is: C0/C1 controls and DEL (newlines can fake extra
 * lines of a listing), bidirectional overrides and isolates (U+202E shows `gpj.py` as `yp.jpg`), marks, zero-width
 * characters and the line/paragraph separators.
 */
// eslint-disable-next-line no-control-regex
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/gu;

/**
 * A file name as it may be shown in a chat or to the model: names from sandboxed code can contain anything, so every
 * hidden or direction-changing character is written out as `\u{…}` (`\n` for a newline) and the name is marked ⚠.
 * Ordinary names come back unchanged.
 *
 * @example displayName('notes.txt') // 'notes.txt'
 * @example displayName('evil\u202Etxt.py') // '⚠ evil\\u{202E}txt.py'
 */
export function displayName(name: string): string {
  if (!name.match(HIDDEN)) return name;
  return `⚠ ${name.replace(HIDDEN, (c) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : `\\u{${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`))}`;
}
