import type { Automation } from './kernel/automation/api-actions.js';
import type { Bot } from './kernel/bot.js';
import type { Capabilities } from './kernel/capabilities/capabilities.js';
import type { ApiTokens } from './services/automation/api-tokens.js';
import type { BotConfig } from './services/config/schema.js';
import type { Settings } from './services/config/settings.js';
import type { Logger } from './services/log/logger.js';
import type { BotMetrics } from './services/metrics/bot-metrics.js';
import type { OwnerNotifier } from './services/notices/owner-notifier.js';
import type { UserBudgets } from './services/providers/budgets.js';
import type { LegCheck } from './services/providers/leg-check.js';
import type { ProviderChain } from './services/providers/provider-chain.js';
import type { UsageLedger } from './services/providers/usage.js';
import type { SetAsideFile, UnsavedFile } from './services/store/data-health.js';
import type { FreeSpace } from './services/store/disk-space.js';

/**
 * The web's door into the bot (`web/` imports the core only here and through the public entry, a layers rule checks
 * it): the operator port the composition root (app/) implements and hands to the web server — how the bot is doing
 * (status, provider legs, capabilities, start checks, incidents), the config to read and save, the owners' access
 * decisions, usage and budgets, the log, and the data files set aside or not saved — and the helpers the dashboard
 * formats them with. `app/` starts `web/`; `web/` never imports `app/`.
 *
 * @example
 * const server = await startWebServer(app, () => transport); // app: an OperatorPort (the App object fits it)
 */
export interface OperatorPort {
  /** The environment settings (the dashboard's and metrics' tokens, the site port, the public URL, …). */
  readonly settings: Settings;
  /** The live config.json, and where it is: the dashboard reads it, validates an edit and saves it. */
  readonly config: BotConfig;
  readonly configFile: string;
  readonly log: Logger;
  /** The plugins, their sites and config sections, the owners' access decisions, privacy, status and notices. */
  readonly bot: Pick<Bot, 'access' | 'automation' | 'config' | 'configSections' | 'notices' | 'plugins' | 'privacy' | 'setConfig' | 'sites' | 'statusSource'>;
  /** The provider legs' health, and a test request on one leg from the dashboard. */
  readonly chain: Pick<ProviderChain, 'health' | 'testLeg'>;
  /** Usage today and the quotas. */
  readonly usage: Pick<UsageLedger, 'snapshot' | 'setQuotas'>;
  readonly budgets: Pick<UserBudgets, 'todayByUser'>;
  readonly capabilities: Pick<Capabilities, 'report' | 'status' | 'missing'>;
  readonly metrics: Pick<BotMetrics, 'exposition'>;
  /** Plugins that could not load, and why. */
  readonly pluginFailures: Array<{ source: string; reason: string }>;
  readonly gatewayHealth: Array<{ name: string; url: string; healthy: boolean; detail: string }>;
  /** The checks made at start (a search key, …), with the setting to correct when one failed. */
  readonly startChecks: ReadonlyArray<LegCheck & { name: string; fix?: string }>;
  /** The data files set aside at load (their bytes kept) and those not saved. */
  dataProblems(): { setAside: SetAsideFile[]; unsaved: UnsavedFile[] };
  freeSpace(): FreeSpace | undefined;
  readonly notices: OwnerNotifier;
  /**
   * The local API (`/api/v1`): the owner's tokens (made, listed, revoked, checked) and what a token may make the bot
   * do — send, list chats, read, prompt — each through its scopes, the effect guard and the outbox.
   */
  readonly automation: { tokens: ApiTokens; actions: Automation };
}

/* What the dashboard and the operator routes format and check with. */
export { ApiError, MAX_PERSONA_CHARS, type ApiErrorCode } from './api/errors.js';
export { DEFAULT_MESSAGES, MAX_MESSAGES, type ChatView, type DeliveryOutcome, type MessageView } from './kernel/automation/api-actions.js';
export type { ApiTokenInfo, ApiTokens } from './services/automation/api-tokens.js';
export { formatScope, parseScopes, SCOPE_GRAMMAR, type Scope } from './services/automation/scopes.js';
export type { Activation, PairingRequest } from './kernel/access/access-store.js';
export { capabilityMark, capabilityWord } from './kernel/capabilities/capabilities.js';
export type { CapabilityStatus } from './api/capability-status.js';
export { corePluginRule } from './kernel/core-plugins/index.js';
export { optionProblems, sectionProblems, type SectionRule } from './kernel/plugin/options.js';
export type { PanelTable } from './kernel/plugin/panel.js';
export type { Plugin } from './kernel/plugin/spec.js';
export { isLid, userPart } from './kernel/port/ids.js';
export type { SessionState, Transport } from './kernel/port/transport.js';
export { humanDuration, legStateInWords, projectVersion, startCheckInWords } from './kernel/status/status-report.js';
export { ConfigError, saveConfigFile, validateConfig, withDefaults } from './services/config/config-file.js';
export type { Access, AccessMode } from './services/config/schema.js';
export { shownSocketUrl } from './services/config/settings.js';
export { LEVEL_RANK, logTail, type TailLine } from './services/log/log-tail.js';
export { recentProblems, type Problem } from './services/log/recent-problems.js';
export { readiness } from './services/metrics/readiness.js';
export type { IncidentView } from './services/notices/owner-notifier.js';
export type { LegHealth, LegStartCheck } from './services/providers/types.js';
export { today } from './services/providers/usage.js';
export type { Delivery } from './kernel/automation/desk.js';
export { MAX_API_MEDIA_BYTES, MEDIA_SCHEMA, POLL_SCHEMA } from './kernel/automation/message-content.js';
export type { HookConfig } from './services/config/schema.js';
export { HOOK_ERROR_STATUS, RecipientRefused, type HookErrorCode } from './api/errors.js';
export { ReplayCache } from './services/webhooks/replay-cache.js';
export { SIGNATURE_HEADER, SIGNATURE_WINDOW_MS, signatureMatches, signatureOf, signedHeaders, TIMESTAMP_HEADER, timestampProblem } from './services/webhooks/signature.js';
export { renderTemplate, TemplateError } from './services/webhooks/template.js';
/** Someone else's words framed as content for the model (provenance). */
export { quotedContent } from './kernel/chat/quoted-content.js';
