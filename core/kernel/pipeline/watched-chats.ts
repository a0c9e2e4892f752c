import type { Logger } from '../../services/log/logger.js';
import type { PluginRegistry } from '../plugin/registry.js';
import { isSelfChat } from '../port/ids.js';
import type { IncomingMessage } from '../port/message.js';

/**
 * Watched chats (`PluginOffer.watch`): a message of a chat some active plugin watches is handed to those plugins'
 * `keep` and goes no further — nothing is answered there, no handler, observer or model sees it. Resolves true when
 * the message was such a one (the caller then stops), false for every other chat, whose messages no watcher ever gets.
 * The account's own "Message yourself" chat is never watched: it is the owner's command line.
 */
export async function keptAsWatched(message: IncomingMessage, registry: PluginRegistry, ownIds: readonly string[], log: Logger): Promise<boolean> {
  if (isSelfChat(message, ownIds)) return false;
  let watched = false;
  for (const state of registry.active()) {
    const watch = state.instance?.watch;
    if (!watch) continue;
    let mine = false;
    try {
      mine = watch.isWatched(message.chatId);
    } catch (err) {
      log.error({ err, plugin: state.plugin.name }, 'a plugin failed to say whether it watches a chat');
    }
    if (!mine) continue;
    watched = true;
    try {
      await watch.keep(message);
    } catch (err) {
      log.error({ err, plugin: state.plugin.name, chat: message.chatId }, 'a plugin failed to keep a message of a watched chat');
    }
  }
  return watched;
}
