/**
 * The test kit for plugin authors (package subpath `wa-assistant-bot/testing`): a bot with your plugin(s) on a
 * memory transport, a fake model on 127.0.0.1, push a message, read the replies; a clock to move by hand, a restart
 * over the same data, `FakeAudio` for a plugin that needs `audio`, and `HttpFake` for the other upstreams your plugin
 * calls. It starts the whole app, so it lives apart from the plugin entry, which loads none of it; it loads no
 * WhatsApp adapter either (the fake WhatsApp socket is
 * behind `wa-assistant-bot/testing/whatsapp`: `startWhatsAppTestBot`, the bot on the real Baileys socket against a
 * WhatsApp Web server on 127.0.0.1).
 *
 * @example
 * import { startTestBot } from 'wa-assistant-bot/testing';
 * const bot = await startTestBot(myPlugin);
 * const replies = await bot.send('.hello');
 * await bot.stop();
 */
export { startTestBot, type DefinedPlugin, type TestBot, type TestBotOptions, type TestBotPlugins, type TestClock } from './test-kit.js';
export { FakeModel, allTexts, contentOf, lastText, obeyingModel, type ModelAnswer, type ModelRequest } from './fake-model.js';
export { describeInjectionCatalogue, InjectionCatalogue, injectionVectors, runInjectionCatalogue, type InjectionCatalogueOptions, type InjectionResult, type InjectionScene, type InjectionVector } from './injection-catalogue.js';
export { HttpFake, type FakeBehaviour, type RecordedRequest } from './http-fake.js';
export { FakeAudio, audioFailures, type SpeechRequest, type TranscriptionUpload } from './fake-audio.js';
export { MemoryTransport } from '../../core/adapters/memory/memory-transport.js';
export type { BotAction, PushInput } from '../../core/adapters/memory/memory-transport.js';
