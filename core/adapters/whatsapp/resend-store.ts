import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Type } from '#typebox';
import { BufferJSON, normalizeMessageContent, PLACEHOLDER_MAX_AGE_SECONDS, proto } from '@whiskeysockets/baileys';
import { databaseFor, keepAside } from '../../services/store/database.js';
import { PluginStores } from '../../services/store/plugin-store.js';
import { tableOf } from '../../services/store/sql-chat-log.js';
import { Store } from '../../services/store/store-declarations.js';

/** How long a sent message can be asked for again: WhatsApp's own window for re-requests (14 days). */
export const RESEND_WINDOW_MS = PLACEHOLDER_MAX_AGE_SECONDS * 1000;

/** One message the bot sent, as kept for resends. */
export interface SentEntry {
  id: string;
  chat: string;
  at: number;
  message: proto.IMessage;
  /** The sender id of the message it answered (its `.mydata` delete removes this one), when known. */
  about?: string;
}

/** A kept message as its row holds it: the message as JSON (bytes in base64), and the message it quotes. */
interface SentItem {
  id: string;
  at: number;
  message: Record<string, unknown>;
  about?: string;
  /** The message it quotes and who wrote that (a delete for everyone or an edit of it takes this one: it holds the old words). */
  quoted?: { id: string; author?: string };
}

/** The quote/mention part of a message (any kind of content carries it the same way). */
function contextOf(message: proto.IMessage | Record<string, unknown>): proto.IContextInfo | undefined {
  const content = normalizeMessageContent(message as proto.IMessage) as Record<string, unknown> | undefined;
  for (const part of Object.values(content ?? {})) {
    const info = (part as { contextInfo?: proto.IContextInfo | null } | null)?.contextInfo;
    if (info) return info;
  }
  return undefined;
}

/**
 * What the bot sent, as the WhatsApp adapter declares it (`whatsapp` namespace of the store database; earlier versions
 * kept `data/whatsapp/sent-messages.jsonl`, taken in once and kept aside), 14 days. A person's `.mydata` holds and
 * deletes the replies in their private chat (and their media keys) and, in groups, the answers to their messages and
 * the messages quoting or mentioning them; a message deleted for everyone or edited takes the replies quoting it (the
 * quote holds the old words). A device that asks for one of those again later gets no answer and shows "waiting for
 * this message".
 */
export const RESEND_STORE = Store.chatLog(
  'sent-messages',
  Type.Object({
    id: Type.String({ minLength: 1 }),
    at: Type.Number(),
    message: Type.Record(Type.String(), Type.Unknown()),
    about: Type.Optional(Type.String()),
    quoted: Type.Optional(Type.Object({ id: Type.String(), author: Type.Optional(Type.String()) })),
  }),
  {
    path: 'whatsapp/sent-messages',
    title: 'messages the bot sent',
    section: 'messages the bot sent (kept 14 days for resends)',
    exportAs: '',
    keepDays: RESEND_WINDOW_MS / 86_400_000,
    at: (item) => item.at,
    people: {
      author: (item) => item.quoted?.author,
      messageId: (item) => item.quoted?.id,
      // A reply cannot take the quoted message's new words: it goes.
      edited: () => undefined,
      names: (item) => [item.about, ...(contextOf(item.message)?.mentionedJid ?? [])],
    },
  },
);

/**
 * What the bot sent (texts, media, edits, reactions), kept in the store database so Baileys' `getMessage` can answer
 * another device's retry request after a restart (else that device shows "waiting for this message" forever). Read
 * into memory at start (the newest `maxEntries` within the window); each message sent is one row added. A person's
 * delete, a delete for everyone and an edit go through the declaration (`RESEND_STORE`): they change rows only when
 * they match one, and this copy follows the chats they changed.
 *
 * @example
 * const store = await ResendStore.open(stores); await store.add(sent.key.id, chat, sent.message);
 * makeWASocket({ getMessage: async (key) => store.get(key.id) });
 */
export class ResendStore {
  private readonly entries = new Map<string, SentEntry>();
  private writing: Promise<void> = Promise.resolve();

  private constructor(private readonly stores: PluginStores, private readonly windowMs: number, private readonly maxEntries: number, private readonly onError: (err: Error) => void, private readonly now: () => number) {}

  /** `stores`: the adapter's declared stores, or a data folder alone. */
  static async open(stores: PluginStores | string, options: { windowMs?: number; maxEntries?: number; onError?: (err: Error) => void; now?: () => number } = {}): Promise<ResendStore> {
    const declared = typeof stores === 'string' ? new PluginStores('whatsapp', stores, [RESEND_STORE]) : stores;
    const store = new ResendStore(declared, options.windowMs ?? RESEND_WINDOW_MS, options.maxEntries ?? 5000, options.onError ?? (() => undefined), options.now ?? (() => Date.now()));
    store.takeInEarlierFile();
    for (const chat of await declared.chats(RESEND_STORE)) await store.readChat(chat);
    store.prune();
    // A person's delete, a delete for everyone, an edit or a chat's move changed a chat's rows: its copy follows.
    declared.onChange(RESEND_STORE, (chat) => (chat === undefined ? undefined : store.readChat(chat)));
    return store;
  }

  /** The file earlier versions kept (one JSON line per message). */
  get file(): string {
    return path.join(this.stores.dataDir, 'whatsapp', 'sent-messages.jsonl');
  }

  /**
   * Takes in `sent-messages.jsonl` of an earlier version: its valid lines within the window, with the row recording it
   * (by its content), in one transaction; then moves it under `data/migrated/`. A crash between the two only moves it
   * at the next start. A broken line (cut by a crash) is skipped.
   */
  private takeInEarlierFile(): void {
    const file = this.file;
    if (!existsSync(file)) return;
    const bytes = readFileSync(file);
    const db = databaseFor(this.stores.dataDir);
    const table = tableOf('chat-log', 'whatsapp', RESEND_STORE.name);
    // The table is made by the log's first use; `chats` is that use.
    void this.stores.chats(RESEND_STORE);
    db.takeInOnce(`${table}:${createHash('sha256').update(bytes).digest('hex')}`, () => {
      const oldest = this.now() - this.windowMs;
      const entries = new Map<string, SentEntry>();
      for (const line of bytes.toString('utf8').split('\n')) {
        const entry = line.trim() ? parseEntry(line) : undefined;
        if (entry && entry.at >= oldest) entries.set(entry.id, entry);
      }
      for (const entry of entries.values()) db.run(`INSERT INTO ${table} (chat, at, item) VALUES (?, ?, ?)`, [entry.chat, entry.at, JSON.stringify(itemOf(entry))]);
    });
    keepAside(this.stores.dataDir, file);
  }

  /** Reads a chat's rows into memory anew (they changed). */
  private async readChat(chat: string): Promise<void> {
    const items = await this.stores.chat(chat).log(RESEND_STORE).read();
    for (const [id, entry] of this.entries) if (entry.chat === chat) this.entries.delete(id);
    const entries = items.map((item) => entryOf(chat, item)).filter((e): e is SentEntry => e !== undefined);
    for (const entry of entries.sort((a, b) => a.at - b.at)) this.put(entry);
  }

  private put(entry: SentEntry): void {
    this.entries.delete(entry.id);
    this.entries.set(entry.id, entry);
  }

  private prune(): void {
    const oldest = this.now() - this.windowMs;
    for (const [id, e] of this.entries) if (e.at < oldest) this.entries.delete(id);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** Records a sent message (any kind: text, media, edit, reaction). */
  add(id: string | null | undefined, chat: string, message: proto.IMessage | null | undefined, about?: string): Promise<void> {
    if (!id || !message) return this.writing;
    const entry: SentEntry = { id, chat, at: this.now(), message, ...(about ? { about } : {}) };
    this.put(entry);
    this.prune();
    const item = itemOf(entry);
    this.writing = this.writing.then(() => this.stores.chat(chat).log(RESEND_STORE).append(item)).catch((err) => this.onError(err as Error));
    return this.writing;
  }

  /** Whom a kept message answered (see `SentEntry.about`). */
  answered(id: string): string | undefined {
    return this.entries.get(id)?.about;
  }

  get(id: string | null | undefined): proto.IMessage | undefined {
    if (!id) return undefined;
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    if (entry.at < this.now() - this.windowMs) {
      this.entries.delete(id);
      return undefined;
    }
    return entry.message;
  }

  get size(): number {
    return this.entries.size;
  }

  async flush(): Promise<void> {
    await this.writing;
  }
}

/** A sent message as its row keeps it; the quoted author of a private chat's quote without one is the chat. */
function itemOf(entry: SentEntry): SentItem {
  const message = proto.Message.toObject(proto.Message.fromObject(entry.message), { bytes: String, longs: Number }) as Record<string, unknown>;
  const context = contextOf(entry.message);
  const quotedAuthor = context?.participant ?? (entry.chat.endsWith('@g.us') ? undefined : entry.chat);
  return {
    id: entry.id,
    at: entry.at,
    message,
    ...(entry.about ? { about: entry.about } : {}),
    ...(context?.stanzaId ? { quoted: { id: context.stanzaId, ...(quotedAuthor ? { author: quotedAuthor } : {}) } } : {}),
  };
}

function entryOf(chat: string, item: SentItem): SentEntry | undefined {
  try {
    const message = proto.Message.fromObject(item.message);
    // An empty message is no message.
    if (!proto.Message.encode(message).finish().length) return undefined;
    return { id: item.id, chat, at: item.at, message, ...(item.about ? { about: item.about } : {}) };
  } catch {
    return undefined;
  }
}

/** One line of the earlier file, or undefined when it is none (cut by a crash, wrong types). */
function parseEntry(line: string): SentEntry | undefined {
  try {
    const value = JSON.parse(line, BufferJSON.reviver) as Partial<SentEntry>;
    if (!value || typeof value.id !== 'string' || typeof value.chat !== 'string' || typeof value.at !== 'number' || !value.message || typeof value.message !== 'object') return undefined;
    const message = proto.Message.fromObject(value.message);
    // Encoding fails on a message whose fields have the wrong types; an empty message is no message.
    if (!proto.Message.encode(message).finish().length) return undefined;
    return { id: value.id, chat: value.chat, at: value.at, message, ...(typeof value.about === 'string' ? { about: value.about } : {}) };
  } catch {
    return undefined;
  }
}
