/**
 * How a voice note's words are shown in the chat: a bold header saying whose note it was (and that it was forwarded),
 * then the words in paragraphs. Paragraphs matter twice: a long transcript reads better on a phone, and the core
 * splits a long message at paragraphs (~4,000 characters), so a long note arrives as whole paragraphs.
 */

/** Characters a paragraph of a transcript grows to before the next sentence starts a new one. */
const PARAGRAPH_CHARS = 600;

/** `m:ss` (or `h:mm:ss`) of a duration in seconds, as a phone shows a voice note's length. */
export function clockLength(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

/**
 * The words in paragraphs of about `PARAGRAPH_CHARS`, cut between sentences; WhatsApp's formatting characters at a
 * word's edge (`*`, `_`, `~`, backtick) are left out, so spoken words never turn bold or struck through by accident.
 *
 * @example paragraphs('One. Two.') // 'One. Two.'
 */
export function paragraphs(words: string): string {
  const plain = words.replace(/(^|\s)[*_~`]+|[*_~`]+(?=\s|$)/g, '$1').replace(/\s+/g, ' ').trim();
  const sentences = plain.match(/[^.!?…]+(?:[.!?…]+|$)\s*/g) ?? [plain];
  const out: string[] = [];
  let current = '';
  for (const sentence of sentences) {
    if (current && current.length + sentence.length > PARAGRAPH_CHARS) {
      out.push(current.trim());
      current = '';
    }
    current += sentence;
  }
  if (current.trim()) out.push(current.trim());
  return out.join('\n\n');
}

export interface NoteHeader {
  /** The note was forwarded: someone else's words, passed on. */
  forwarded: boolean;
  /** Length in seconds, when measured. */
  seconds?: number;
  /** Who sent it, named in groups. */
  senderName?: string;
}

function header(what: string, note: NoteHeader): string {
  const kind = note.forwarded ? 'Forwarded voice note' : 'Voice note';
  const from = note.senderName ? ` from ${note.senderName.replace(/[*_~`\r\n]/g, '')}` : '';
  const length = note.seconds !== undefined ? ` (${clockLength(note.seconds)})` : '';
  return `🎙️ *${what === 'words' ? kind : `TL;DR of a ${kind.toLowerCase()}`}*${from}${length}`;
}

/**
 * The message with a note's words: `🎙️ *Voice note* from Ann (0:42)` then the words in paragraphs.
 *
 * @example wordsMessage('see you at six', { forwarded: true }) // '🎙️ *Forwarded voice note*\nsee you at six'
 */
export function wordsMessage(words: string, note: NoteHeader): string {
  return `${header('words', note)}\n${paragraphs(words) || '(no words)'}`;
}

/** The message with a long note's summary, and how to get the whole text. */
export function tldrMessage(summary: string, note: NoteHeader, fullCommand: string): string {
  return `${header('tldr', note)}\n${summary.trim()}\n\n_The whole text: reply to the note or this message with ${fullCommand}._`;
}
