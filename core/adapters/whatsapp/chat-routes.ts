import { Type } from '#typebox';
import type { PluginStores } from '../../services/store/plugin-store.js';
import type { SqlDoc } from '../../services/store/sql-docs.js';
import { Store } from '../../services/store/store-declarations.js';
import { BoundedMap } from './caches.js';

/** What the adapter keeps of one chat beyond its messages. */
export interface ChatRoute {
  /** The plain jid a private chat's messages last arrived on (its answers go there: a LID or the phone jid). */
  arrivedOn?: string;
  /** The chat's disappearing-message timer in seconds (0: off), as last learnt. */
  timer?: number;
}

/** At most this many chats are kept (the least recently changed go first). */
export const CHAT_ROUTES_MAX = 10_000;

const Route = Type.Object({ arrivedOn: Type.Optional(Type.String({ minLength: 1 })), timer: Type.Optional(Type.Integer({ minimum: 0 })) }, { additionalProperties: false });

/**
 * Where each chat's answers go and the timer they inherit (`whatsapp` namespace of the store database), so a restart
 * answers a chat where it arrived and with its timer. Keyed by chat id: a person's `.mydata` holds and deletes their
 * private chat's entry, and the entry follows a chat that moves to its phone number.
 */
export const CHAT_ROUTES_STORE = Store.doc('chat-routes', Type.Object({ chats: Type.Record(Type.String(), Route) }), () => ({ chats: {} }), {
  title: 'WhatsApp chat addresses and timers',
  section: 'WhatsApp chat addresses and disappearing timers',
  exportAs: '',
  people: { byId: (d) => d.chats },
});

/**
 * The stored routes of every chat, read once at open and changed in place: the answers of a chat go where it last
 * arrived, with the timer it last had, before and after a restart. A change is written soon after (the changes of one
 * tick together); one that changes nothing writes nothing (a message arrives on the same address as the last one).
 *
 * @example
 * const routes = await ChatRoutes.open(stores);
 * routes.set('628123@s.whatsapp.net', { arrivedOn: '98765@lid' });
 * routes.get('628123@s.whatsapp.net') // { arrivedOn: '98765@lid' }
 */
export class ChatRoutes {
  private chats: Record<string, ChatRoute> = {};
  /**
   * What this process learnt, read first: a person's `.mydata` delete takes their entry from the store, but the
   * answer to that very message (and the rest of the turn) still goes where it came from, with its timer.
   */
  private readonly learnt = new BoundedMap<string, ChatRoute>(CHAT_ROUTES_MAX);

  private constructor(private readonly doc: SqlDoc<{ chats: Record<string, ChatRoute> }>, private readonly onError: (err: Error) => void) {}

  static async open(stores: PluginStores, onError: (err: Error) => void = () => undefined): Promise<ChatRoutes> {
    const routes = new ChatRoutes(stores.document(CHAT_ROUTES_STORE), onError);
    routes.chats = (await routes.doc.get()).chats;
    // A person's delete or a chat's move changes the document itself: read it again.
    stores.onChange(CHAT_ROUTES_STORE, () => routes.doc.get().then((d) => void (routes.chats = d.chats)));
    return routes;
  }

  get(chatId: string): ChatRoute | undefined {
    const stored = this.stored(chatId);
    const learnt = this.learnt.get(chatId);
    return learnt || stored ? { ...stored, ...learnt } : undefined;
  }

  private stored(chatId: string): ChatRoute | undefined {
    return Object.prototype.hasOwnProperty.call(this.chats, chatId) ? this.chats[chatId] : undefined;
  }

  /** Records what changed of a chat's route (at once in memory); nothing is written when it is what was kept already. */
  set(chatId: string, change: ChatRoute): void {
    this.learnt.set(chatId, { ...this.learnt.get(chatId), ...change });
    const before = this.stored(chatId);
    if (before && Object.entries(change).every(([key, value]) => before[key as keyof ChatRoute] === value)) return;
    const apply = (chats: Record<string, ChatRoute>) => {
      const route = { ...chats[chatId], ...change };
      // Re-inserted last: the oldest changed chat is the first key, and goes first when the map is full.
      delete chats[chatId];
      chats[chatId] = route;
      const keys = Object.keys(chats);
      for (const old of keys.slice(0, Math.max(0, keys.length - CHAT_ROUTES_MAX))) delete chats[old];
    };
    apply(this.chats);
    this.doc
      .update((d) => {
        // The document read anew meanwhile (a person's delete, a chat's move): the change goes into it too.
        if (d.chats !== this.chats) {
          apply(d.chats);
          this.chats = d.chats;
        }
      })
      .catch((err: unknown) => this.onError(err as Error));
  }

  /** Resolves once every change so far is in the database. */
  flush(): Promise<void> {
    return this.doc.flush();
  }
}
