import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { definePlugin, Store, Type, type IncomingMedia, type MessageContext, type PluginHost, type Static } from '../../core/index.js';
import { atFirstUse, type DocumentText } from '../../core/builtin.js';

const options = Type.Object({
  maxDocumentBytes: Type.Integer({ title: 'Largest document (bytes)', minimum: 10_000, maximum: 100_000_000, default: 20_000_000, description: 'largest document read (bytes); larger ones are refused without downloading' }),
  maxChars: Type.Integer({ title: 'Most characters given to the model', minimum: 1000, maximum: 400_000, default: 40_000, description: 'most characters of a document given to the model (longer ones are cut at whole pages or rows, and the answer says so)' }),
  maxPages: Type.Integer({ title: 'Most pages read', minimum: 1, maximum: 2000, default: 100, description: 'most PDF pages read for text' }),
  maxScanPages: Type.Integer({ title: 'Most scanned pages read', minimum: 1, maximum: 10, default: 3, description: 'most pages of a scanned PDF (no text layer) looked at as pictures' }),
  maxUnzippedMb: Type.Integer({ title: 'Largest unpacked size (MB)', minimum: 1, maximum: 1000, default: 50, description: 'most MB a DOCX, XLSX or ODT may unpack to (zip bombs are refused)' }),
  readSeconds: Type.Integer({ title: 'Reading time limit (seconds)', minimum: 5, maximum: 300, default: 30, description: 'time limit of one reading step in the jail (seconds)' }),
});
export type DocumentOptions = Static<typeof options>;

/** Where the documents' bytes are kept (under data/media: swept after 30 days like all incoming media). */
const FILES = 'media/documents/files';

/** One document a chat received: its name, its text as read (cut as noted), and where its bytes are kept. */
const KeptItem = Type.Object({
    messageId: Type.String(),
    author: Type.String(),
    name: Type.String(),
    kind: Type.String(),
    at: Type.Integer(),
    text: Type.String(),
    note: Type.Optional(Type.String()),
    scanned: Type.Optional(Type.Boolean()),
    /** The kept bytes' file name in data/media/documents/files. */
    file: Type.Optional(Type.String()),
});
export type KeptDocument = Static<typeof KeptItem>;
const KEPT = Store.chatLog('documents', KeptItem, {
    path: 'media/documents/chats',
    title: 'documents received',
    keepDays: 30,
    at: (item) => item.at,
    people: { author: (item) => item.author, messageId: (item) => item.messageId },
});

/** The document a message is about, and the quote it came through. */
export type FoundDocument = { media: IncomingMedia; quoted?: { id: string } };

/** True for a document the vision plugin does not take (it takes documents whose mimetype is a picture). */
function isDocument(media: IncomingMedia | undefined): media is IncomingMedia {
  return media?.kind === 'document' && !/^image\//i.test(media.mimetype ?? '');
}

function looksLikeCommand(text: string, prefix: string): boolean {
  return text.startsWith(prefix) || /^\/\w/.test(text);
}

/** The document a message is about: its own, or — for a question replying to one — the quoted one. */
function findDocument(ctx: MessageContext<unknown>): FoundDocument | undefined {
  if (looksLikeCommand(ctx.text, ctx.host.config().prefix)) return undefined;
  if (isDocument(ctx.message.media)) return { media: ctx.message.media };
  const quoted = ctx.message.quoted;
  if (!ctx.message.media && ctx.text && quoted && isDocument(quoted.media)) return { media: quoted.media, quoted: { id: quoted.id } };
  return undefined;
}

/** Keeps the documents a chat sent (text in the store, bytes under data/media/documents/files) and finds them again. */
function documentShelf(host: PluginHost<DocumentOptions>) {
  const filesDir = host.files.folder(FILES);

  /** Removes kept bytes no kept document refers to any more (after a delete, a message deleted for everyone, a move). */
  async function dropUnreferenced(): Promise<void> {
    const referenced = new Set<string>();
    for (const chat of await host.store.chats(KEPT)) for (const item of await host.store.chat(chat).log(KEPT).read()) if (item.file) referenced.add(item.file);
    for (const name of await readdir(filesDir).catch(() => [] as string[])) if (!referenced.has(name)) await rm(path.join(filesDir, name), { force: true });
  }
  // Returned, not dropped: the store waits for it, so a delete's files are gone once the stores are idle.
  const unsubscribe = host.store.onChange(KEPT, () => dropUnreferenced().catch((err) => host.log.warn({ err }, 'could not remove the bytes of deleted documents')));

  async function keep(ctx: MessageContext<DocumentOptions>, media: IncomingMedia, bytes: Buffer, doc: DocumentText): Promise<void> {
    await mkdir(filesDir, { recursive: true, mode: 0o700 });
    const file = `${Date.now()}-${randomBytes(8).toString('hex')}.${doc.kind}`;
    await writeFile(path.join(filesDir, file), bytes, { mode: 0o600 });
    await host.store.chat(ctx.chatId).log(KEPT).append({
      messageId: ctx.message.id,
      author: ctx.senderId,
      name: (media.fileName ?? `document.${doc.kind}`).slice(0, 200),
      kind: doc.kind,
      at: Date.now(),
      text: doc.text,
      ...(doc.note ? { note: doc.note } : {}),
      ...(doc.pageImages ? { scanned: true } : {}),
      file,
    });
  }

  /** The document of the quoted message as this chat keeps it: its text, or for a scan its bytes read again. */
  async function fromKept(ctx: MessageContext<DocumentOptions>, id: string): Promise<{ item: KeptDocument; bytes?: Buffer } | undefined> {
    const items = await host.store.chat(ctx.chatId).log(KEPT).read();
    const item = items.find((i) => i.messageId === id);
    if (!item) return undefined;
    const bytes = item.scanned && item.file ? await readFile(path.join(filesDir, item.file)).catch(() => undefined) : undefined;
    return { item, bytes };
  }

  return { keep, fromKept, stop: unsubscribe };
}
export type DocumentShelf = ReturnType<typeof documentShelf>;

/**
 * Documents: PDF, Word (DOCX), OpenDocument (ODT), Excel (XLSX), CSV and text files sent in a chat — with a question
 * as the caption, or quoted by a question later — are read inside the jail (the type from the bytes), and the model
 * answers with their text; a scanned PDF's pages go to the vision path. Kept under data/media for 30 days.
 */
export default definePlugin({
  name: 'documents',
  description: 'Reads PDF, Word, Excel, OpenDocument, CSV and text files and answers questions about them',
  // After vision (55): a document whose mimetype is a picture is vision's.
  order: 56,
  needs: ['chat'],
  missing: 'I cannot read documents right now: no AI provider is configured.',
  options,
  stores: [KEPT],
  setup(host) {
    const shelf = documentShelf(host);
    // Reading and answering (reading.ts) load with the first document asked about, not at start.
    const reading = atFirstUse(() => import('./reading.js'));
    return {
      predicates: [{ when: (ctx) => Boolean(findDocument(ctx)), usage: '(document + question)', help: 'send or quote a PDF, Word, Excel, OpenDocument, CSV or text file with a question and I answer from it', run: async (ctx) => (await reading()).answer(host, ctx, findDocument(ctx), shelf) }],
      stop: shelf.stop,
    };
  },
});
