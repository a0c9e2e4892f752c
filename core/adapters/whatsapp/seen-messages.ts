import { Type } from '#typebox';
import { PluginStores } from '../../services/store/plugin-store.js';
import type { SqlDoc } from '../../services/store/sql-docs.js';
import { Store } from '../../services/store/store-declarations.js';
import { SEEN_MESSAGES_SCHEMA } from './whatsapp-data-schemas.js';

export interface SeenFile {
  keys: string[];
}

/**
 * `whatsapp/seen-messages.json` of earlier versions, now a document of the store database: the keys (chat, id,
 * participant) of the most recent messages handled. No words; not a person's data in `.mydata` (as before).
 */
export const SEEN_MESSAGES_STORE = Store.doc('seen-messages', Type.Unsafe<SeenFile>(SEEN_MESSAGES_SCHEMA.schema), () => ({ keys: [] }), {
  path: 'whatsapp/seen-messages.json',
  title: SEEN_MESSAGES_SCHEMA.name,
});

/**
 * Remembers which messages were already handled (by chat, id and participant), so a message WhatsApp delivers
 * twice — for example again as `append` after a reconnect or a restart — gets one answer. The most recent
 * `capacity` keys are kept in the store (the adapter's `seen-messages` document).
 *
 * @example
 * const seen = new SeenMessages(stores); // or a data folder alone: new SeenMessages('data')
 * if (await seen.firstTime(chat, id, participant)) handle(message);
 */
export class SeenMessages {
  private readonly stores: PluginStores;
  private readonly doc: SqlDoc<SeenFile>;
  private set: Set<string> | undefined;

  constructor(stores: PluginStores | string, private readonly capacity = 2000) {
    this.stores = typeof stores === 'string' ? new PluginStores('whatsapp', stores, [SEEN_MESSAGES_STORE]) : stores;
    this.doc = this.stores.document(SEEN_MESSAGES_STORE);
  }

  /** True the first time a message key is seen; false for every later delivery of the same message. */
  async firstTime(chatId: string, id: string, participant = ''): Promise<boolean> {
    const doc = await this.doc.get();
    this.set ??= new Set(Array.isArray(doc.keys) ? doc.keys : []);
    const key = `${chatId}|${id}|${participant}`;
    if (this.set.has(key)) return false;
    this.set.add(key);
    await this.doc.update((d) => {
      if (!Array.isArray(d.keys)) d.keys = [];
      d.keys.push(key);
      if (d.keys.length > this.capacity) {
        for (const old of d.keys.splice(0, d.keys.length - this.capacity)) this.set?.delete(old);
      }
    });
    return true;
  }

  async flush(): Promise<void> {
    await this.stores.flush();
  }
}
