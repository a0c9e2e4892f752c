import type { BotConfig } from '../../services/config/schema.js';

export { isSelfChat } from '../port/ids.js';

/** True when config `account.mode` says the bot runs on the owner's own number (self-chat mode). */
export function onOwnersNumber(config: BotConfig): boolean {
  return config.account?.mode === 'self-chat';
}
