import path from 'node:path';
import { JsonFile } from '../../services/store/json-file.js';
import { SEEN_MESSAGES_SCHEMA } from './whatsapp-data-schemas.js';

/**
 * Remembers which messages were already handled (by chat, id and participant), so a message WhatsApp delivers
 * twice — for example again as `append` after a reconnect or a restart — gets one answer. The most recent
 * `capacity` keys are kept on disk (`data/whatsapp/seen-messages.json`, written atomically).
 *
 * @example
 * const seen = new SeenMessages('data');
 * if (await seen.firstTime(chat, id, participant)) handle(message);
 */
export class SeenMessages {
  private readonly doc: JsonFile<{ keys: string[] }>;
  private set: Set<string> | undefined;

  constructor(dataDir: string, private readonly capacity = 2000, onCorrupt?: (file: string, movedTo: string, err: Error) => void) {
    this.doc = new JsonFile(path.join(dataDir, 'whatsapp', 'seen-messages.json'), () => ({ keys: [] }), { schema: SEEN_MESSAGES_SCHEMA, onCorrupt });
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
    await this.doc.flush();
  }
}
