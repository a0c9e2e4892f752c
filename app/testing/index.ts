/**
 * The test kit for plugin authors (package subpath `wa-assistant-bot/testing`): a bot with your plugin on a
 * memory transport, a fake model on 127.0.0.1, push a message, read the replies. It starts the whole app, so it
 * lives apart from the plugin entry, which loads none of it.
 *
 * @example
 * import { startTestBot } from 'wa-assistant-bot/testing';
 * const bot = await startTestBot(myPlugin);
 * const replies = await bot.send('.hello');
 * await bot.stop();
 */
export { startTestBot, type DefinedPlugin, type TestBot, type TestBotOptions } from './test-kit.js';
export { FakeModel, lastText, type ModelAnswer, type ModelRequest } from './fake-model.js';
export type { BotAction, PushInput } from '../../core/adapters/memory/memory-transport.js';
