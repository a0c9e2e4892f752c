import type { Capabilities } from '../capabilities/capabilities.js';
import type { Logger } from '../../services/log/logger.js';
import type { PluginRegistry } from '../plugin/registry.js';
import type { ChatWatch, WatchedMedia } from '../plugin/watch.js';
import { isSelfChat } from '../port/ids.js';
import type { IncomingMedia, IncomingMessage } from '../port/message.js';

/**
 * Watched chats (`PluginOffer.watch`): a message of a chat some active plugin watches is handed to those plugins'
 * `keep` and goes no further — nothing is answered there, no handler, observer or model sees it. Resolves true when
 * the message was such a one (the caller then stops); false, at once and not as a promise, for every other chat,
 * whose messages no watcher ever gets (nearly every message: it goes on without waiting a turn).
 * The account's own "Message yourself" chat is never watched: it is the owner's command line.
 */
export function keptAsWatched(message: IncomingMessage, registry: PluginRegistry, ownIds: () => readonly string[], log: Logger, capabilities: Capabilities): Promise<true> | false {
  let watchers: Array<{ plugin: string; watch: ChatWatch }> | undefined;
  const active = registry.active();
  for (let i = 0; i < active.length; i++) {
    const state = active[i]!;
    const watch = state.instance?.watch;
    if (!watch) continue;
    let mine = false;
    try {
      mine = watch.isWatched(message.chatId);
    } catch (err) {
      log.error({ err, plugin: state.plugin.name }, 'a plugin failed to say whether it watches a chat');
    }
    if (mine) (watchers ??= []).push({ plugin: state.plugin.name, watch });
  }
  if (!watchers || isSelfChat(message, ownIds())) return false;
  return keep(message, watchers, registry, log, capabilities);
}

/** Hands a watched chat's message to each plugin watching it, in order. */
async function keep(message: IncomingMessage, watchers: Array<{ plugin: string; watch: ChatWatch }>, registry: PluginRegistry, log: Logger, capabilities: Capabilities): Promise<true> {
  const media: WatchedMedia = { words: () => watchedWordsOf(message, registry, capabilities, log) };
  for (const { plugin, watch } of watchers) {
    try {
      await watch.keep(message, media);
    } catch (err) {
      log.error({ err, plugin, chat: message.chatId }, 'a plugin failed to keep a message of a watched chat');
    }
  }
  return true;
}

/**
 * A watched message's media in words, from the first active plugin offering its kind (`watchedWords`) with its needs
 * met; undefined when none does, or when the reader found nothing or failed (logged: the message is kept without).
 */
async function watchedWordsOf(message: IncomingMessage, registry: PluginRegistry, capabilities: Capabilities, log: Logger): Promise<string | undefined> {
  const kind = message.media?.kind;
  if (!kind) return undefined;
  for (const state of registry.active()) {
    const reader = state.instance?.watchedWords.find((r) => r.media.includes(kind));
    if (!reader) continue;
    if (capabilities.lacks(state.plugin.needs ?? []) || capabilities.lacks(reader.needs ?? [])) continue;
    try {
      const words = await reader.read(message as IncomingMessage & { media: IncomingMedia });
      return typeof words === 'string' && words.trim() ? words.trim() : undefined;
    } catch (err) {
      log.warn({ err, plugin: state.plugin.name, chat: message.chatId, kind }, 'a watched message could not be put into words; it is kept without them');
      return undefined;
    }
  }
  return undefined;
}
