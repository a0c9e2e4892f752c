import type { Static, TObject, TSchema, TUnknown } from '#typebox';
import type { StoreDeclaration } from '../../services/store/store-declarations.js';
import type { DataSchema } from '../../services/store/schemas.js';
import type { CapabilityStatus } from '../../api/capability-status.js';
import type { Awaitable } from './awaitable.js';
import type { PluginHost } from './message-context.js';
import type { PluginOffer } from './offer.js';

/*
 * The plugin contract, one set of types the core itself runs on: a plugin is a factory that declares what it is
 * (`PluginSpec`: name, options, needs, what it provides) and `setup(host)` returns what it offers (`PluginOffer`).
 * State lives in setup's closure, one per running bot. `definePlugin` (contract.ts) checks a spec and freezes it.
 */

/**
 * A capability a plugin owns: detected at start for the one start-log table, needed by name by any plugin.
 * `detect` answers true/false or `{ ok, detail }`; when it is not ok without a detail, `missing` is the sentence shown.
 */
export interface CapabilityDeclaration {
  name: string;
  detect(host: PluginHost<any, any>): Awaitable<boolean | CapabilityStatus>;
  /** Re-checked when used, for capabilities that change at run time (keys exhausted). */
  live?(): CapabilityStatus;
  missing: string;
  /** For owners: how to get it when it is missing, in plain words (the start report prints it next to "off"). */
  fix?: string;
}

/** An environment setting a plugin reads; the start log says whether it is set (never its value). */
export interface SettingDeclaration {
  name: string;
  description: string;
}

/**
 * A kind of data file a plugin's `stores` stand for (each declaration's, and the `earlierFiles` of layouts it was
 * converted from): the backup manifest names its version (a backup made by a newer version is refused at restore),
 * `npm run doctor` checks the files, and, for a path without placeholders in its folder, the temporary files an
 * interrupted write left there are swept at start.
 */
export interface DataFileDeclaration {
  /** Where, relative to DATA_DIR; `<name>` marks a part that varies, e.g. `workspaces/index/<id>.json`. */
  path: string;
  schema: DataSchema;
}

/**
 * A top-level key of config.json that the plugin owns, for settings owners expect at the top (a time zone, say):
 * validated with `schema` (and `check`) at load and at every dashboard edit, shown on the dashboard, read typed with
 * `host.section()`. An invalid value never stops the bot: the start log and the dashboard name it, the plugin gets
 * the default, and the file is left as the owner wrote it. A key the core owns (`prefix`, `plugins`, …) or another
 * plugin already claimed is refused (`PLUGIN_CONFIG_KEY_TAKEN`).
 *
 * @example
 * configSection: { key: 'timeZone', schema: Type.String({ default: '', description: 'IANA time zone' }), check: (z) => (!z || isZone(z) ? undefined : 'is not a time zone') }
 */
export interface ConfigSectionDeclaration<C extends TSchema = TSchema> {
  /** The top-level key, letters and digits starting with a letter (`timeZone`). */
  key: string;
  /** TypeBox schema of its value, with a default its own schema accepts; its `description` is shown on the dashboard. */
  schema: C;
  /** What the schema cannot say (a real time zone name): the problem in words, or undefined when the value is fine. */
  check?(value: Static<C>): string | undefined;
}

export interface PluginSpec<S extends TObject, C extends TSchema = TUnknown> {
  /** Lowercase letters, digits and dashes; the plugin's key in config.json `plugins`. */
  name: string;
  /** Shown in `.help` and in the dashboard. */
  description: string;
  /** The options in config.json `plugins.<name>`, as a TypeBox object with defaults (`Type.Object({ … })`). */
  options?: S;
  /** Capabilities the plugin needs; its handlers and tools wait for them (`missing` is said instead). */
  needs?: string[];
  /** The reply when a handler matches but a needed capability is missing. Default: names what is missing. */
  missing?: string | ((missing: string[]) => string);
  provides?: CapabilityDeclaration[];
  settings?: SettingDeclaration[];
  /**
   * Options that moved from config.json to environment settings (option → setting name), because they run a program
   * or open a hole. An old config.json keeping them starts with a warning naming them; the dashboard refuses them.
   *
   * @example
   * movedToEnv: { ytdlpPath: 'YTDLP_PATH' }
   */
  movedToEnv?: Readonly<Record<string, string>>;
  /**
   * What the plugin keeps through `host.store` (made with `Store.chatDoc`, `Store.doc`, `Store.chatLog`): the core
   * writes, checks, backs up and flushes them, and answers `.mydata`, deletes and chat moves for them.
   */
  stores?: StoreDeclaration[];
  /** A top-level section of config.json the plugin owns (see `ConfigSectionDeclaration`). */
  configSection?: ConfigSectionDeclaration<C>;
  /** Whether the plugin is on when config.json does not mention it. Default true. */
  enabledByDefault?: boolean;
  /**
   * The plugin answers free text that no other plugin claims (the core's `chat` plugin does, with the main model; a
   * plugin of yours may instead, e.g. with the chat plugin turned off). `.help` reads it to say whether anything
   * besides the commands is answered. Give such a plugin a late `order` so it comes after the commands.
   */
  answersFreeText?: boolean;
  /** Lower is tried earlier among plugins whose handlers match. Default 100. */
  order?: number;
  setup(host: PluginHost<Static<S>, Static<C>>): Awaitable<PluginOffer<Static<S>>>;
}

/**
 * A plugin as the core keeps it: the spec `definePlugin` checked and froze (options erased to `any`: each plugin's own
 * are checked against its schema by the core). The core tells one from anything else by its brand (`isPlugin` in
 * contract.ts), which is kept out of this type on purpose: two copies of the API (the bot's and a plugin's package)
 * must describe the same type.
 */
export interface Plugin extends Readonly<Omit<PluginSpec<TObject, TSchema>, 'options' | 'setup' | 'configSection' | 'provides' | 'stores'>> {
  /** What it keeps through `host.store` (see `Store` in services/store/store-declarations.ts). */
  readonly stores?: readonly StoreDeclaration[];
  /** The kinds of data files its `stores` stand for (see `DataFileDeclaration`). */
  readonly dataFiles: readonly DataFileDeclaration[];
  /** JSON schema of this plugin's options in config.json (besides `enabled` and `access`). */
  readonly optionsSchema: TObject;
  readonly provides?: readonly CapabilityDeclaration[];
  /** A top-level section of config.json it owns, see `ConfigSectionDeclaration`. */
  readonly configSection?: ConfigSectionDeclaration;
  /** The factory returning what the plugin offers. */
  setup(host: PluginHost<any, any>): Awaitable<PluginOffer<any>>;
}
