/*
 * What a store that keeps something about people answers to (`.mydata`, deletes, edits, chat moves). In the port, the
 * lowest layer that names it: a transport hands over its declared stores (`Transport.declaredStores`), and the
 * services' privacy registry adopts them with the core's and the plugins'.
 */

/** The ids one person writes under (phone jid and LID), canonical: `<digits>@s.whatsapp.net` / `<digits>@lid`. */
export type PersonIds = string[];

/**
 * A part of the bot that keeps something about people (history, memory, the voice archive, workspaces) and takes
 * part in the privacy controls: export (`.mydata`), delete (`.mydata delete`, the dashboard) and messages deleted
 * for everyone on WhatsApp.
 */
export interface PrivacyParticipant {
  /** Short name of what it keeps, the section name in the export ("history", "voice notes"). */
  name: string;
  /** Everything kept about the person, as plain JSON. */
  exportFor(person: PersonIds): Promise<unknown>;
  /** Deletes everything kept about the person; returns how many items went. */
  deleteFor(person: PersonIds): Promise<number>;
  /**
   * Removes one message deleted for everyone; returns how many items went. `author`: when given, only an item that
   * one of these ids wrote goes (a member deleting "for everyone" can delete only their own message); without it, any
   * item of that message (the account itself, a group admin). See `changeableBy`.
   */
  revoke?(chatId: string, messageId: string, author?: PersonIds): Promise<number>;
  /**
   * Replaces the text of one message its sender edited (the old text is nowhere on disk afterwards); returns how many
   * items changed. `author`: only an item that one of these ids wrote changes (see `changeableBy`).
   */
  edit?(chatId: string, messageId: string, text: string, author?: PersonIds): Promise<number>;
  /**
   * A private chat is known by another id from now on (WhatsApp moved it from its LID to the phone number): what is
   * kept under `from` is moved to `to`, so nothing of the chat stays behind under the old id. When both ids hold
   * something, nothing is lost (merged, or both kept and the clash reported by rejecting). Restart-safe: `to` is
   * written before `from` is removed, and running it again after a crash adds no duplicates (the transport announces
   * the move again at the chat's next message after a restart). What is cached in memory under either id is released
   * first, so no later write brings `from`'s file back or overwrites `to` with stale data.
   */
  moveChat?(from: string, to: string): Promise<void>;
}

/**
 * Stores made from `Store.*` declarations (`PluginStores`): one participant per `.mydata` section, from the
 * declarations alone, so nothing keeps a hand-written participant (see `PrivacyRegistry.adopt`).
 */
export interface DeclaredStores {
  /** The namespace they are kept under (a plugin's name, `core`, `whatsapp`). */
  readonly plugin: string;
  participants(): PrivacyParticipant[];
}
