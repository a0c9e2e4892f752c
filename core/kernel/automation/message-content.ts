import { ApiError } from '../../api/errors.js';
import { extensionFor, mimeFor } from '../../services/media/mime-type.js';
import { checkPoll, POLL_LIMITS } from '../chat/polls.js';
import type { OutgoingPoll } from '../port/message.js';

/*
 * What a message sent through the automation bridge (POST /api/v1/messages, the MCP server's send_message) may be: a
 * text, one media file, or a poll — exactly one. Checked here, before the guard is asked, so a bad request is a 400
 * that names what is wrong and nothing is held or sent. Media comes as base64 in the JSON body (one request, no
 * multipart and no URL the bot would fetch), at most MAX_API_MEDIA_BYTES, and its type is read from its bytes, never
 * from what the caller claims: a "photo" that is not a JPEG or PNG is refused.
 */

/** The largest media file a request may carry (decoded). It waits in the guard's store while held, so it stays modest. */
export const MAX_API_MEDIA_BYTES = 5 * 1024 * 1024;
/** The longest caption (WhatsApp shows about this much under a picture before cutting it). */
export const MAX_CAPTION_CHARS = 1024;
/** The longest document name. */
export const MAX_FILE_NAME_CHARS = 200;

export type BridgeMediaKind = 'image' | 'video' | 'audio' | 'voice' | 'document';

/** A media file to send, as kept while it is held (plain JSON). */
export interface BridgeMedia {
  kind: BridgeMediaKind;
  /** The type read from the bytes (a document: the caller's, or its name's). */
  mimetype: string;
  /** The file's bytes, base64. */
  data: string;
  fileName?: string;
  caption?: string;
}

/** One message of the bridge: exactly one of these. */
export type BridgeContent = { text: string } | { media: BridgeMedia } | { poll: OutgoingPoll };

/**
 * For each kind but `document`: the formats WhatsApp shows as that kind, by the extension file-type reads from the
 * bytes, with the mimetype sent and the ones a caller may name for it.
 */
const FORMATS: Record<Exclude<BridgeMediaKind, 'document'>, Record<string, { mimetype: string; also?: string[] }>> = {
  image: { jpg: { mimetype: 'image/jpeg' }, png: { mimetype: 'image/png' } },
  video: { mp4: { mimetype: 'video/mp4' }, '3gp': { mimetype: 'video/3gpp' } },
  audio: {
    mp3: { mimetype: 'audio/mpeg', also: ['audio/mp3'] },
    m4a: { mimetype: 'audio/mp4', also: ['audio/x-m4a', 'audio/m4a'] },
    aac: { mimetype: 'audio/aac' },
    ogg: { mimetype: 'audio/ogg', also: ['audio/opus'] },
    opus: { mimetype: 'audio/ogg', also: ['audio/opus'] },
    amr: { mimetype: 'audio/amr' },
  },
  voice: { ogg: { mimetype: 'audio/ogg; codecs=opus', also: ['audio/ogg', 'audio/opus'] }, opus: { mimetype: 'audio/ogg; codecs=opus', also: ['audio/ogg', 'audio/opus'] } },
};

/** In words, for errors and the docs: what each kind takes. */
export const MEDIA_FORMATS_IN_WORDS: Record<BridgeMediaKind, string> = {
  image: 'JPEG or PNG',
  video: 'MP4 (or 3GP)',
  audio: 'MP3, M4A, AAC, Ogg or AMR',
  voice: 'Ogg/Opus (a voice note)',
  document: 'any file',
};

const KINDS = Object.keys(MEDIA_FORMATS_IN_WORDS) as BridgeMediaKind[];

/** `media` as JSON Schema (the OpenAPI document and the MCP tool describe it with this). */
export const MEDIA_SCHEMA = {
  type: 'object',
  required: ['kind', 'data'],
  additionalProperties: false,
  properties: {
    kind: { enum: KINDS, description: KINDS.map((k) => `${k}: ${MEDIA_FORMATS_IN_WORDS[k]}`).join('; ') },
    data: { type: 'string', contentEncoding: 'base64', description: `the file's bytes in base64 (no data: prefix), at most ${MAX_API_MEDIA_BYTES / 1024 / 1024} MB decoded` },
    mimetype: { type: 'string', description: "optional: an image's, video's or audio's type is read from its bytes (a different claim is refused); a document's is this, else its fileName's" },
    fileName: { type: 'string', maxLength: MAX_FILE_NAME_CHARS, description: "the name a document is shown with" },
    caption: { type: 'string', maxLength: MAX_CAPTION_CHARS, description: 'words under a picture, video or document (a voice note has none)' },
  },
} as const;

/** `poll` as JSON Schema: WhatsApp's bounds (polls.ts POLL_LIMITS). */
export const POLL_SCHEMA = {
  type: 'object',
  required: ['question', 'options'],
  additionalProperties: false,
  properties: {
    question: { type: 'string', minLength: 1, maxLength: POLL_LIMITS.questionChars },
    options: { type: 'array', minItems: POLL_LIMITS.minOptions, maxItems: POLL_LIMITS.maxOptions, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: POLL_LIMITS.optionChars } },
    multiple: { type: 'boolean', default: false, description: 'true: a voter may choose several options' },
  },
} as const;
const MIME_SHAPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}(\s*;\s*[a-z0-9_.+-]+=[^;\s]{1,100}){0,4}$/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const badMedia = (message: string) => new ApiError('API_BAD_MEDIA', 400, message);

/**
 * The one message `body` asks for (its `text`, `media` or `poll`), checked; an ApiError otherwise: 400
 * `API_BAD_REQUEST` (none or several), `API_BAD_MEDIA`, `API_BAD_POLL`; 413 `API_BODY_TOO_LARGE` for a file over
 * MAX_API_MEDIA_BYTES.
 *
 * @example await messageContent({ poll: { question: 'Pizza?', options: ['yes', 'no'] } }) // { poll: { question: 'Pizza?', options: [...], multiple: false } }
 */
export async function messageContent(body: Record<string, unknown>): Promise<BridgeContent> {
  const given = (['text', 'media', 'poll'] as const).filter((field) => body[field] !== undefined && body[field] !== null);
  if (given.length !== 1) {
    throw new ApiError('API_BAD_REQUEST', 400, given.length ? `send one of "text", "media" or "poll", not ${given.map((g) => `"${g}"`).join(' and ')} together (a picture's words go in media.caption)` : 'say what to send: "text", "media" or "poll"');
  }
  if (given[0] === 'text') {
    const text = body.text;
    if (typeof text !== 'string' || !text.trim()) throw new ApiError('API_BAD_REQUEST', 400, '"text" must be a text that is not empty');
    return { text };
  }
  if (given[0] === 'poll') return { poll: pollOf(body.poll) };
  return { media: await mediaOf(body.media) };
}

function pollOf(value: unknown): OutgoingPoll {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ApiError('API_BAD_POLL', 400, '"poll" must be an object: { "question", "options": [ … ], "multiple" }');
  const poll = value as Record<string, unknown>;
  if (typeof poll.question !== 'string') throw new ApiError('API_BAD_POLL', 400, 'poll.question must be a text');
  if (!Array.isArray(poll.options) || poll.options.some((o) => typeof o !== 'string')) throw new ApiError('API_BAD_POLL', 400, 'poll.options must be a list of texts');
  if (poll.multiple !== undefined && typeof poll.multiple !== 'boolean') throw new ApiError('API_BAD_POLL', 400, 'poll.multiple must be true (several answers) or false (one)');
  const checked = checkPoll({ question: poll.question, options: poll.options as string[], multiple: poll.multiple === true });
  if (!checked.ok) throw new ApiError('API_BAD_POLL', 400, checked.problem);
  return checked.poll;
}

async function mediaOf(value: unknown): Promise<BridgeMedia> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw badMedia('"media" must be an object: { "kind", "data" (base64), "mimetype", "fileName", "caption" }');
  const media = value as Record<string, unknown>;
  const kind = media.kind;
  if (typeof kind !== 'string' || !KINDS.includes(kind as BridgeMediaKind)) throw badMedia(`media.kind must be one of ${KINDS.join(', ')}`);
  const caption = optionalText(media.caption, 'media.caption', MAX_CAPTION_CHARS);
  if (caption !== undefined && kind === 'voice') throw badMedia('a voice note has no caption: send the words as a text');
  const fileName = optionalText(media.fileName, 'media.fileName', MAX_FILE_NAME_CHARS);
  if (fileName !== undefined && (/[/\\]/.test(fileName) || /[\p{Cc}]/u.test(fileName) || fileName === '.' || fileName === '..')) throw badMedia('media.fileName must be a plain file name (no folders, no control characters)');
  const claimed = media.mimetype;
  if (claimed !== undefined && (typeof claimed !== 'string' || !MIME_SHAPE.test(claimed.trim()))) throw badMedia('media.mimetype must be a media type such as image/jpeg or application/pdf');
  const bytes = base64Bytes(media.data);
  if (kind !== 'document') {
    const mimetype = await sniffedType(kind as Exclude<BridgeMediaKind, 'document'>, bytes, claimed as string | undefined);
    return { kind: kind as BridgeMediaKind, mimetype, data: bytes.toString('base64'), ...(fileName ? { fileName } : {}), ...(caption ? { caption } : {}) };
  }
  const mimetype = (claimed as string | undefined)?.trim() || (fileName ? mimeFor(fileName) : 'application/octet-stream');
  // A document is shown by its name: one is made from its type when none is given ("document.pdf").
  const named = fileName ?? `document${extensionFor(mimetype) ? `.${extensionFor(mimetype)}` : ''}`;
  return { kind: 'document', mimetype, data: bytes.toString('base64'), fileName: named, ...(caption ? { caption } : {}) };
}

/** The mimetype of `bytes` when they are a format WhatsApp shows as `kind` (and the caller's claim, if any, agrees). */
async function sniffedType(kind: Exclude<BridgeMediaKind, 'document'>, bytes: Buffer, claimed: string | undefined): Promise<string> {
  // Loaded on the first media request, not at start-up.
  const found = await (await import('file-type')).fileTypeFromBuffer(bytes.subarray(0, 4100));
  const format = found && FORMATS[kind][found.ext];
  if (!format) throw badMedia(`${kind === 'image' || kind === 'audio' ? 'an' : 'a'} ${kind} must be ${MEDIA_FORMATS_IN_WORDS[kind]}, and these bytes are ${found ? found.ext.toUpperCase() : 'no format the bot knows'}`);
  const base = claimed?.split(';')[0]!.trim().toLowerCase();
  if (base && base !== format.mimetype.split(';')[0] && !format.also?.includes(base)) throw badMedia(`media.mimetype says ${base}, but the bytes are ${format.mimetype.split(';')[0]}`);
  return format.mimetype;
}

function base64Bytes(value: unknown): Buffer {
  if (typeof value !== 'string' || !value.trim()) throw badMedia("media.data must be the file's bytes in base64");
  const text = value.replace(/\s+/g, '');
  // Checked on the text first: a body within the request cap can still decode to more than a file may be.
  if (Math.floor((text.length * 3) / 4) - (text.match(/=+$/)?.[0].length ?? 0) > MAX_API_MEDIA_BYTES) {
    throw new ApiError('API_BODY_TOO_LARGE', 413, `the file is larger than ${MAX_API_MEDIA_BYTES / 1024 / 1024} MB`);
  }
  if (!BASE64.test(text) || text.length % 4 === 1) throw badMedia('media.data is not base64 (A–Z, a–z, 0–9, + and /, with = padding; no data: URL prefix)');
  const bytes = Buffer.from(text, 'base64');
  if (!bytes.length) throw badMedia('media.data is empty');
  return bytes;
}

function optionalText(value: unknown, field: string, max: number): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badMedia(`${field} must be a text`);
  const text = value.trim();
  if (text.length > max) throw badMedia(`${field} is longer than ${max} characters`);
  return text || undefined;
}
