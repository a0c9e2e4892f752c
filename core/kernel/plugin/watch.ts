import type { IncomingMedia, IncomingMessage, MediaKind } from '../port/message.js';
import type { Awaitable } from './awaitable.js';

/* A plugin's read-only watch of chats the owner chose (`PluginOffer.watch`) and its readers of their media. */

/** See `PluginOffer.watch`. */
export interface ChatWatch {
  isWatched(chatId: string): boolean;
  keep(message: IncomingMessage, media: WatchedMedia): Awaitable<void>;
}

/** What `ChatWatch.keep` may ask the core about a watched message's media. */
export interface WatchedMedia {
  /**
   * The media's words from the plugin that offers them for its kind (`watchedWords`), asked now: undefined when the
   * message has no media, no active plugin offers its kind (or its `needs` are unmet), or the reader found none or failed.
   */
  words(): Promise<string | undefined>;
}

/** See `PluginOffer.watchedWords`. */
export interface WatchedWordsReader {
  media: MediaKind | MediaKind[];
  /** Capabilities the reader needs besides the plugin's; while one is missing, it is not asked. */
  needs?: string[];
  /** The words of the message's media, or undefined when it cannot say them (too long, no longer served). */
  read(message: IncomingMessage & { media: IncomingMedia }): Awaitable<string | undefined>;
}
