import type { ApproveResult } from '../access/access-control.js';
import type { Activation, PairingRequest } from '../access/access-store.js';
import type { CapabilityStatus } from '../../api/capability-status.js';
import type { Settings } from '../../services/config/settings.js';
import type { OwnerNotifier } from '../../services/notices/owner-notifier.js';
import type { KeyPoolNotices } from '../../services/providers/key-pool.js';
import type { ChatSummary, HistoryAppendListener, HistoryEntry } from '../../services/store/history.js';
import type { MemoryFact } from '../../services/store/memory.js';

/*
 * The narrow views and ports the host hands a plugin (`host.settings`, `host.histories`, `host.memories`,
 * `host.audioKeys`, `host.access`): what a plugin may read or ask of the core's services, not the services themselves.
 * The core's classes fit them; a plugin cannot construct, reconfigure or reach past them, and the plugin API package
 * carries these interfaces instead of the services' code.
 */

/**
 * The environment settings a plugin reads (`host.settings`): the audio provider, the public base URL, the upstream
 * timeout, the egress exception and ffmpeg's path. Not the chat gateways' keys nor the dashboard's and metrics' tokens.
 */
export type SettingsReader = Readonly<Pick<Settings, 'audio' | 'publicBaseUrl' | 'upstreamTimeoutMs' | 'ffmpegPath' | 'egressAllowPrivateHosts' | 'egressAllowPrivateHostsFrom'>>;

/** Every chat's history, for plugins that work across chats (`host.histories`); in a handler, `ctx.history` is the chat's. */
export interface HistoryView {
  /** The newest `limit` entries of the chat, oldest first. */
  recent(chatId: string, limit?: number): Promise<HistoryEntry[]>;
  /** True when the chat's history changed after `time` (epoch ms). */
  changedSince(chatId: string, time: number): Promise<boolean>;
  /**
   * Adds an entry to a chat's history (a plugin's message the model should know of at that chat's next turn). Another
   * person's words go in framed as content (`quotedContent`), never as the chat's own turns.
   */
  append(chatId: string, entry: HistoryEntry): Promise<void>;
  /** Empties the chat's history (and its summary); resolves with the number of entries removed. */
  clear(chatId: string): Promise<number>;
  /** Removes the chat's summary when `matches` says so; true when one was removed. */
  removeSummaryWhere(chatId: string, matches: (summary: ChatSummary) => boolean): Promise<boolean>;
  /** Calls `listener` for every entry appended to any chat; returns a function that removes it. */
  onAppend(listener: HistoryAppendListener): () => void;
}

/** Every chat's memory, for plugins that change it for a chat (`host.memories`); in a handler, `ctx.memory` is the chat's. */
export interface MemoryView {
  /** Forgets fact number `which` (1-based), all facts, or those containing a text; resolves with what was forgotten. */
  forget(chatId: string, which: number | 'all' | { containing: string }): Promise<MemoryFact[]>;
}

/**
 * The audio port (`host.audioKeys`): the core's one pool of the audio provider's keys, shared with the provider
 * chain's audio legs, so a key parked or rejected by one user is skipped by all. `run` tries the usable keys in turn.
 *
 * @example
 * const text = await host.audioKeys.run('transcription', (key) => transcribe(key, file));
 */
export interface AudioKeys {
  /** How many keys are configured. */
  readonly size: number;
  /** Owners hear once when every key is used up or rejected, and once when a key works again. */
  notices: OwnerNotifier | undefined;
  /** The sentences they hear (the plugin owning the keys' capability words them for its users). */
  noticeText: KeyPoolNotices;
  /** Cooldowns follow this clock (a test's fake clock). */
  useClock(now: () => number): void;
  isUsable(key: string): boolean;
  /** Parks a key until `until` (epoch ms) after a failure seen outside `run`. */
  markFailed(key: string, until: number, reason: string): void;
  usableCount(): number;
  /** The capability's status: how many keys are usable, parked, rejected (never a key). */
  status(): CapabilityStatus;
  run<T>(purpose: string, call: (key: string) => Promise<T>, options?: { park?: boolean }): Promise<T>;
}

/**
 * Who the bot answers and how, as the owners decide it (`host.access`): pairing codes, `.activation`, personas,
 * paused chats. Check `ctx.isOwner` before changing anything for someone; `by` names who did.
 */
export interface AccessDecisions {
  /** The pairing requests waiting for an owner. */
  pending(): PairingRequest[];
  approve(code: string, by: string): Promise<ApproveResult>;
  deny(code: string, by: string): Promise<ApproveResult>;
  activation(chatId: string): Activation | undefined;
  setActivation(chatId: string, mode: Activation, by: string): Promise<void>;
  persona(chatId: string): string | undefined;
  setPersona(chatId: string, text: string | undefined, by: string): Promise<void>;
  /** When the chat's pause ends (epoch ms), null for paused until resumed, undefined when not paused. */
  pausedUntil(chatId: string): number | null | undefined;
  pause(chatId: string, until: number | null, by: string): Promise<void>;
  resume(chatId: string): Promise<boolean>;
}

/**
 * A person's data across the bot (`host.personalData`): every declared store's part of it, the core's and each
 * plugin's, by section. `person` is one person's ids (phone jid and LID).
 */
export interface PersonalData {
  /** Everything kept about the person, by section (`.mydata`). */
  exportFor(person: string[]): Promise<Record<string, unknown>>;
  /** Deletes everything kept about the person; how many items went, by section (`.mydata delete`). */
  deleteFor(person: string[]): Promise<Record<string, number>>;
}

/** A fresh folder for one job's temporary files (`host.files.work()`). */
export interface WorkFolder {
  readonly dir: string;
  /** Removes the folder and everything in it (call it in a `finally`). */
  remove(): Promise<void>;
}

/**
 * The files a plugin keeps or works on that are not records (`host.files`): media it converts, files it publishes for
 * download or keeps for a person beside a declared document. Records (what a person said, choices, counters) belong in
 * `host.store`, where `.mydata`, deletes, backups and chat moves follow from the declaration.
 */
export interface PluginFiles {
  /**
   * The absolute path of a folder for the plugin's files under DATA_DIR (`'generated'`, `'media/sticker'`), not made
   * until the plugin writes there. `name` is relative, with no empty, `.` or `..` part, and never a place of the core's
   * own (the store database, the WhatsApp session, `migrated`, `work`, `logs`, dot folders): refused with a TypeError.
   */
  folder(name: string): string;
  /**
   * A fresh, private (0700) folder for one job's temporary files, under `DATA_DIR/work/<plugin>/` (the data folder's
   * file system: a result moves out with a rename). What a crash left there is removed at the plugin's first job of
   * the next run.
   */
  work(): Promise<WorkFolder>;
}
