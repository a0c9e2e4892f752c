/**
 * The one public entry for plugin authors — ours and third parties' alike. A plugin imports nothing else from the
 * core; a plugin in its own npm package imports it as `wa-assistant-bot/plugin`.
 *
 * @example
 * import { definePlugin, Type } from 'wa-assistant-bot/plugin';
 * export default definePlugin({
 *   name: 'hello',
 *   description: 'Says hello',
 *   options: Type.Object({ greeting: Type.String({ default: 'Hello' }) }),
 *   setup: () => ({ commands: [{ command: 'hello', run: (ctx) => ctx.reply(`${ctx.options.greeting}, ${ctx.args || 'you'}!`) }] }),
 * });
 */
export { definePlugin } from './plugin/contract.js';
export type {
  CapabilityDeclaration,
  CommandContext,
  CommandHandler,
  Host as PluginHost,
  LiteralHandler,
  MediaContext,
  MediaHandler,
  MessageContext,
  PatternContext,
  PatternHandler,
  PluginAi,
  PluginOffer,
  PluginSpec,
  PluginTool,
  PredicateHandler,
  SettingDeclaration,
  ToolCallOf,
} from './plugin/contract.js';
export type { Plugin, CommandMatch, ChatHistoryView, ChatMemoryView } from './plugin/types.js';
export { PluginError, type PluginErrorCode } from './plugin/errors.js';
/** True when an id (jid, LID or bare digits) is one of a list's, compared by the user part as the core does. */
export { inIdList } from './mentions/ids.js';

/** The option-schema builder (TypeBox): JSON Schema at run time, a TypeScript type at compile time. */
export { Type, type Static, type TObject } from '@sinclair/typebox';

export type { CapabilityStatus } from './capabilities/capabilities.js';
export type { IncomingMessage, IncomingMedia, MediaKind, OutgoingMedia, SentMessage } from './transport/message.js';
export type { HistoryEntry } from './store/history.js';
export type { MemoryFact } from './store/memory.js';
export type { Logger } from './log/logger.js';
export type { AiService, RespondOptions } from './plugin/ai.js';
export { AllProvidersFailedError } from './providers/types.js';
/** The wait an upstream asked for (retry-after / retry-after-ms headers), for plugins that call an upstream of their own. */
export { retryAfterMs } from './providers/failure.js';
export { statusText, type StatusReport } from './status/status-report.js';
/** The provider chain's premium-model rule, shared by every plugin that honours an explicit premium request. */
export { DEFAULT_PREMIUM_PHRASES, premiumRequest } from './chat/premium-request.js';

/** The test kit: a bot with one plugin, a fake model on 127.0.0.1, push a message, read the replies. */
export { startTestBot, type TestBot, type TestBotOptions } from './testing/test-kit.js';
export { FakeModel, lastText, type ModelAnswer, type ModelRequest } from './testing/fake-model.js';
export type { BotAction, PushInput } from './transport/memory.js';
