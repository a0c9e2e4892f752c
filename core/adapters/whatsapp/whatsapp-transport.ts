import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Browsers, generateMessageIDV2, isJidStatusBroadcast, makeCacheableSignalKeyStore, normalizeMessageContent, proto as waProto } from '@whiskeysockets/baileys';
import type {
  AnyMessageContent,
  AuthenticationState,
  BaileysEventMap,
  GroupMetadata,
  MiscMessageGenerationOptions,
  SocketConfig,
  WAMessage,
  WAMessageKey,
  WAPresence,
  proto,
} from '@whiskeysockets/baileys';
import type { Logger } from '../../services/log/logger.js';
import { logOnlyNotifier, type OwnerNotifier } from '../../services/notices/owner-notifier.js';
import { isLid, userPart } from '../../kernel/port/ids.js';
import { mimeFor } from '../../services/media/mime-type.js';
import type { IncomingMessage, OutgoingMedia, SentMessage } from '../../kernel/port/message.js';
import type { PrivacyParticipant } from '../../services/store/privacy.js';
import type { ChangeSender, SendOptions, InboundHandler, SessionState, Transport, TransportEvents } from '../../kernel/port/transport.js';
import { CREDS_RESTORED_INCIDENT, credsRecoveryText } from './creds-backup.js';
import { AuthStateCorruptError, useDurableAuthState, type DurableAuthOptions, type DurableAuthState } from './auth-store.js';
import { BoundedMap, TtlCache } from './caches.js';
import { GroupCache } from './group-cache.js';
import { SendStatus, type Restriction } from './send-status.js';
import { Identity, type LidMappingStore } from './identity.js';
import { IdentityLinks } from './identity-links.js';
import { Addressing } from './addressing.js';
import { expirationOf, isViewOnce, mapIncoming, plainJid, textOf, timerChangeOf, type MediaDownloader } from './message-mapper.js';
import { ResendStore } from './resend-store.js';
import { whatsAppPrivacy } from './whatsapp-privacy.js';
import { videoThumbnail } from './video-thumbnail.js';
import { AttemptWindow, decideReconnect, DEFAULT_BACKOFF, describeClose, type BackoffSettings } from './reconnect-policy.js';
import { bundledVersionFirst, WebVersionSource, type VersionFetcher } from './web-version.js';
import { SeenMessages } from './seen-messages.js';

export { AuthStateCorruptError };

/** The part of a Baileys socket the transport uses (the real `makeWASocket` result, or a fake in tests). */
export interface WhatsAppSocket {
  ev: {
    on<E extends keyof BaileysEventMap>(event: E, listener: (arg: BaileysEventMap[E]) => void): unknown;
    removeAllListeners(event?: keyof BaileysEventMap): unknown;
  };
  end(error: Error | undefined): void;
  sendMessage(jid: string, content: AnyMessageContent, options?: MiscMessageGenerationOptions): Promise<WAMessage | undefined>;
  sendPresenceUpdate(type: WAPresence, jid?: string): Promise<void>;
  /** Baileys' read receipts (blue ticks) for received messages. */
  readMessages(keys: WAMessageKey[]): Promise<void>;
  requestPairingCode(phoneNumber: string): Promise<string>;
  groupMetadata(jid: string): Promise<GroupMetadata>;
  updateMediaMessage?(message: WAMessage): Promise<WAMessage>;
  /** Baileys' check of the account's reach-out time-lock (a restriction); it also emits the answer in connection.update. */
  fetchAccountReachoutTimelock?(): Promise<unknown>;
  /** Baileys' logout: tells WhatsApp to remove this linked device, then closes with 401 (logged out). */
  logout?(reason?: string): Promise<void>;
  /** Baileys' signal repository: its `lidMapping` store knows the phone of LIDs the session has met. */
  signalRepository?: { lidMapping?: LidMappingStore };
}

/** What the transport hands to the socket factory. */
export type SocketOptions = Partial<SocketConfig> & { auth: AuthenticationState };

/** Builds one socket. Default: Baileys' `makeWASocket` with the latest WhatsApp Web version when reachable. */
export type SocketFactory = (options: SocketOptions) => WhatsAppSocket | Promise<WhatsAppSocket>;

/** The owner's WhatsApp preferences, read at each use (the dashboard may change them while the bot runs). */
export interface WhatsAppPreferences {
  /** Blue ticks on messages the bot took up (config `whatsapp.readReceipts`). Default true. */
  readReceipts?: boolean;
  /** "Online" while typing (config `whatsapp.presence`). Default true. */
  presence?: boolean;
}

/**
 * Plain options: the adapter reads no config file and no environment; the composition root (app/) hands it what it
 * needs from them.
 */
export interface WhatsAppTransportOptions {
  /** The data folder (DATA_DIR): the session in `session_auth/`, the adapter's own files in `whatsapp/`. */
  dataDir: string;
  log: Logger;
  /**
   * WA_WEBSOCKET_URL: the WebSocket URL to connect to instead of WhatsApp's own (a test server, a proxy), with `shown`
   * the same URL with its credentials masked, for the log. Unset: WhatsApp's own.
   */
  socketUrl?: { url: string; shown: string };
  /** Baileys' own log level (BAILEYS_LOG_LEVEL). Default warn. */
  baileysLogLevel?: string;
  /** The owner's preferences (config `whatsapp`). Default: all on. */
  preferences?: () => WhatsAppPreferences;
  /** Where the QR page is, in words, for log lines and owner notices (from config `host` and `port`). */
  webAddress?: () => string;
  /** Socket factory (tests inject a fake socket). */
  makeSocket?: SocketFactory;
  /** Media download (default Baileys `downloadMediaMessage`). */
  download?: (message: WAMessage, socket: WhatsAppSocket) => Promise<Buffer>;
  /** Prints a QR in the terminal (default qrcode-terminal on stderr). */
  printQr?: (qr: string) => void;
  /** Random source for backoff jitter (tests). */
  random?: () => number;
  /** Reconnect pacing (tests shorten it); unset fields keep their defaults. */
  backoff?: Partial<BackoffSettings>;
  /** Phone number for pairing-code login instead of the QR (PAIRING_PHONE); not a phone number: the QR, said in the log. */
  pairingPhone?: string;
  /** Session folder; default `<DATA_DIR>/session_auth`. */
  authDir?: string;
  /** Hooks of the auth store (tests imitate crashes). */
  authOptions?: DurableAuthOptions;
  /** Called at every login with the own ids (app/start.ts writes the LID into config.json). */
  onLinked?: (me: { id?: string; lid?: string; name?: string }) => void | Promise<void>;
  /** Called at every close that leads to a reconnect, with the close reason (metrics count reconnects by reason). */
  onReconnect?: (reason: string) => void;
  /** Messages delivered late (`append`, sent while the bot was offline) older than this are not answered. Default 1 h. */
  maxOfflineAgeMs?: number;
  /** How long a send waits for a (re)connection before failing. Default 30 s. */
  sendWaitMs?: number;
  /** Where incidents the owners must hear of go (403, 500, account restrictions …). Default: the log only. */
  notices?: OwnerNotifier;
  /** Looks up the current WhatsApp Web version (default Baileys' `fetchLatestWaWebVersion`, 5 s timeout). */
  fetchVersion?: VersionFetcher;
  /** How long a fetched Web version is reused before it is fetched again. Default 6 h. */
  versionRefreshMs?: number;
  /**
   * An open connection over which no message traffic arrives (messages, receipts, acks of sent messages; keep-alive
   * answers do not count) for this long is reconnected. Default 30 min.
   */
  silentMs?: number;
  /** How long group metadata is kept (Baileys' events keep it current meanwhile). Default 6 h. */
  groupTtlMs?: number;
  /** Decrypt contacts' status updates (status@broadcast). Default false: nothing uses them, and each costs work. */
  receiveStatusUpdates?: boolean;
  /** Session and sender-key files untouched this long are deleted at start. Default 30 days. */
  staleKeyMs?: number;
  /** The project's ffmpeg, for video previews (else Baileys runs the `ffmpeg` on PATH). */
  ffmpegPath?: string;
}

/** WhatsApp lets a message be edited for 15 minutes after it was sent. */
export const EDIT_WINDOW_MS = 15 * 60_000;
const DEFAULT_STALE_KEY_MS = 30 * 24 * 60 * 60_000;

const DEFAULT_MAX_OFFLINE_AGE_MS = 60 * 60_000;

/** Digits of a phone number given as `+62 812-345`, or undefined when it is not one. */
export function pairingDigits(value: string | undefined): string | undefined {
  const digits = (value ?? '').replace(/[\s()+-]/g, '');
  return /^\d{6,20}$/.test(digits) ? digits : undefined;
}

/**
 * Keep-alive answers come every 30 s even from a session that no longer delivers messages (Baileys #2331), so the
 * watchdog counts message traffic only; reconnecting a merely quiet session costs a login and loses nothing (what
 * WhatsApp holds for the device arrives at the reconnect).
 */
const DEFAULT_SILENT_MS = 30 * 60_000;

async function defaultMakeSocket(options: SocketOptions): Promise<WhatsAppSocket> {
  const baileys = await import('@whiskeysockets/baileys');
  return baileys.makeWASocket(options) as unknown as WhatsAppSocket;
}

async function defaultFetchVersion(): ReturnType<VersionFetcher> {
  const { fetchLatestWaWebVersion } = await import('@whiskeysockets/baileys');
  return fetchLatestWaWebVersion({ signal: AbortSignal.timeout(5000) });
}

async function defaultDownload(message: WAMessage, socket: WhatsAppSocket, log: Logger): Promise<Buffer> {
  const { downloadMediaMessage } = await import('@whiskeysockets/baileys');
  return downloadMediaMessage(message, 'buffer', {}, {
    logger: log as never,
    // Old media links expire; Baileys asks the phone to re-upload when the socket can.
    reuploadRequest: (m) => (socket.updateMediaMessage ? socket.updateMediaMessage(m) : Promise.reject(new Error('media link expired'))),
  });
}

async function defaultPrintQr(qr: string): Promise<void> {
  const qrcode = (await import('qrcode-terminal')).default;
  qrcode.generate(qr, { small: true }, (art) => process.stderr.write(`\n${art}\n`));
}

/**
 * The WhatsApp transport over Baileys 7: links the account (QR in the terminal and on `GET /`, or a pairing code),
 * keeps the session in `data/session_auth/` (atomic writes), reconnects (515 at once, 401 → new QR, 440 long
 * backoff, anything else exponential backoff with jitter; one socket at a time), maps messages to the core's type
 * and sends texts, edits, reactions, media and typing.
 *
 * @example
 * const transport = new WhatsAppTransport({ ...whatsAppSettings(app.settings, () => app.config), log });
 * await app.connect(transport);
 */
export class WhatsAppTransport implements Transport {
  readonly name = 'whatsapp';
  /** People type in bursts: their lines within 1.5 s are one turn (config `conversation.debounceMs`). */
  readonly defaultDebounceMs = 1500;
  private readonly log: Logger;
  private readonly makeSocket: SocketFactory;
  private readonly random: () => number;
  private readonly backoff: BackoffSettings;
  private readonly pairingPhone: string | undefined;
  private readonly authDir: string;
  private handler: InboundHandler | undefined;
  private auth: DurableAuthState | undefined;
  private links: IdentityLinks | undefined;
  private identity: Identity | undefined;
  private resend: ResendStore | undefined;
  private events: TransportEvents = {};
  private decryptFailures = 0;
  private cachedKeys: { source: unknown; keys: AuthenticationState['keys'] } | undefined;
  private seen: SeenMessages | undefined;
  private socket: WhatsAppSocket | undefined;
  private generation = 0;
  private status: SessionState['status'] = 'offline';
  private since = Date.now();
  private qr: string | undefined;
  private pairingCode: string | undefined;
  private lastError: string | undefined;
  private retryAt: number | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private newLogin = false;
  private logoutsInARow = 0;
  /** Set while the owner's relink (dashboard) logs the device out: that logout is asked for, not an incident. */
  private relinking = false;
  /** The device was logged out on the phone and no new link has opened since. */
  private loggedOut = false;
  private problem: SessionState['problem'];
  private stableTimer: NodeJS.Timeout | undefined;
  private watchdogTimer: NodeJS.Timeout | undefined;
  /** When message traffic (not keep-alive answers) last arrived on the current connection. */
  private lastMessageAt = 0;
  private readonly notices: OwnerNotifier;
  private readonly versions: WebVersionSource;
  private readonly attempts: AttemptWindow;
  private readonly restarts: AttemptWindow;
  private stopped = false;
  private me: { id?: string; lid?: string; name?: string } = {};
  private openWaiters: Array<() => void> = [];
  private inboundChain: Promise<void> = Promise.resolve();
  private readonly handling = new Set<Promise<void>>();
  /** Chats the bot is typing in now (`setTyping`): it shows itself offline again once none is left. */
  private readonly typingIn = new Set<string>();
  /** Recent inbound messages (for quoting and reacting), by `chat|id`. */
  private readonly inbound = new BoundedMap<string, WAMessage>(1000);
  /** Recent messages the bot sent (for edits and Baileys' retry `getMessage`), by id. */
  private readonly sent = new BoundedMap<string, WAMessage>(1000);
  /**
   * Ids the bot gave its own messages before sending them: WhatsApp echoes every message of the account (`fromMe`),
   * the bot's own included, possibly before the send resolves; a `fromMe` message with another id was typed by the owner.
   */
  private readonly ownIdsSent = new BoundedMap<string, true>(2000);
  private readonly retryCounter = new TtlCache(60 * 60_000);
  private readonly groups: GroupCache;
  /** Disappearing-message timer (seconds) per chat, learnt from what arrives, so replies inherit it. */
  private readonly timers = new BoundedMap<string, number>(5000);
  private readonly sendStatus: SendStatus;
  /** Where each private chat's messages go (the address it last arrived on; a LID rather than a phone jid). */
  private readonly addressing = new Addressing(() => this.links, () => this.socket?.signalRepository?.lidMapping);

  constructor(private readonly options: WhatsAppTransportOptions) {
    this.log = options.log;
    this.makeSocket = options.makeSocket ?? defaultMakeSocket;
    this.random = options.random ?? Math.random;
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.notices = options.notices ?? logOnlyNotifier(options.log);
    const socketUrl = options.socketUrl;
    // Another endpoint than WhatsApp's own: the version is not looked up on WhatsApp's site until that endpoint
    // refuses the bundled one (405), so a test server never makes the bot reach the internet.
    this.versions = new WebVersionSource(socketUrl ? bundledVersionFirst(options.fetchVersion ?? defaultFetchVersion) : (options.fetchVersion ?? defaultFetchVersion), options.versionRefreshMs);
    if (socketUrl) this.log.warn({ WA_WEBSOCKET_URL: socketUrl.shown }, `WA_WEBSOCKET_URL is set: WhatsApp connects to ${socketUrl.shown} instead of WhatsApp's own server. That endpoint sees the whole session (every message and the account's keys): use it only for a test server or a proxy you run`);
    this.attempts = new AttemptWindow(this.backoff.windowMs, this.backoff.maxPerWindow);
    this.restarts = new AttemptWindow(this.backoff.windowMs, this.backoff.maxRestartsPerWindow);
    this.sendStatus = new SendStatus(this.log, this.notices, async () => {
      // Baileys' answer also arrives as `reachoutTimeLock` in connection.update, which sets or lifts the restriction.
      const socket = this.socket;
      if (!socket?.fetchAccountReachoutTimelock) throw new Error('WhatsApp is not connected');
      return socket.fetchAccountReachoutTimelock();
    });
    this.groups = new GroupCache(options.groupTtlMs, 5000, (meta) => {
      for (const p of meta.participants) {
        this.learn(p.phoneNumber ?? (isLid(p.id) ? undefined : p.id), p.lid ?? (isLid(p.id) ? p.id : undefined));
        this.identity?.noteLid(p.lid ?? p.id);
      }
      if (meta.ephemeralDuration !== undefined) this.timers.set(meta.id, meta.ephemeralDuration || 0);
    });
    this.authDir = options.authDir ?? path.join(options.dataDir, 'session_auth');
    const phoneSetting = options.pairingPhone;
    this.pairingPhone = pairingDigits(phoneSetting);
    if (phoneSetting?.trim() && !this.pairingPhone) this.log.error({ PAIRING_PHONE: phoneSetting }, 'PAIRING_PHONE must be the phone number in international form, digits only (e.g. 6281234567890); using the QR code instead');
  }

  /**
   * Loads the session and starts connecting; resolves once the first socket is created (not when it is linked).
   * Rejects with AuthStateCorruptError (naming the file) when creds.json is corrupt.
   */
  async start(onMessage: InboundHandler, events: TransportEvents = {}): Promise<void> {
    this.handler = onMessage;
    this.events = events;
    this.stopped = false;
    const dataDir = this.options.dataDir;
    this.links = await IdentityLinks.open(dataDir, (err) => this.log.warn({ err }, 'could not read or write data/whatsapp/identity-links.json (phone ↔ LID pairs)'));
    this.identity = new Identity(
      this.links,
      () => this.socket?.signalRepository?.lidMapping,
      dataDir,
      (phone, lid) => this.learn(phone, lid),
      (err, detail) => this.log.warn({ err, ...detail }, 'could not move the data of a private chat to its one id'),
      async (from, to) => {
        await this.events.onChatIdChange?.(from, to);
      },
    );
    this.resend = await ResendStore.open(dataDir, { onError: (err) => this.log.warn({ err }, 'could not read or write data/whatsapp/sent-messages.jsonl (messages other devices may ask for again)') });
    this.seen = new SeenMessages(dataDir, 2000, (file, movedTo) => this.log.warn({ file, movedTo }, 'the list of handled WhatsApp messages was corrupt; started a new one'));
    await this.loadAuth();
    await this.connect();
  }

  private async loadAuth(): Promise<DurableAuthState> {
    this.auth = await useDurableAuthState(this.authDir, {
      onCorruptKey: (file, reason) => this.log.warn({ file, reason }, 'a WhatsApp session key file was unreadable; treating it as missing'),
      ...this.options.authOptions,
    });
    const stale = await this.auth.pruneStale(this.options.staleKeyMs ?? DEFAULT_STALE_KEY_MS).catch((err) => {
      this.log.warn({ err }, 'could not prune old WhatsApp session keys');
      return [] as string[];
    });
    if (stale.length) this.log.info({ removed: stale.length }, `removed ${stale.length} session/sender-key files unused for ${Math.round((this.options.staleKeyMs ?? DEFAULT_STALE_KEY_MS) / 86_400_000)} days`);
    if (this.auth.recovery) {
      const text = credsRecoveryText(this.auth.recovery, this.authDir);
      this.log.error({ folder: this.authDir, reason: this.auth.recovery.reason, setAside: this.auth.recovery.setAside }, text);
      this.notices.raise(CREDS_RESTORED_INCIDENT, text);
    }
    const me = this.auth.state.creds.me;
    if (this.auth.restored && me?.id) this.me = { id: plainJid(me.id), lid: plainJid(me.lid), name: me.name ?? me.notify };
    this.log.info({ folder: this.authDir }, this.auth.restored ? 'WhatsApp session found: reconnecting without a new scan' : 'no WhatsApp session stored yet: a QR code (or pairing code) will follow');
    return this.auth;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clearRetry();
    this.clearConnectionTimers();
    this.dropSocket();
    this.status = 'offline';
    for (const wake of this.openWaiters.splice(0)) wake();
    await this.inboundChain.catch(() => undefined);
    await Promise.all([this.auth?.flush(), this.links?.flush(), this.seen?.flush(), this.resend?.flush()]);
    this.handler = undefined;
  }

  private clearRetry(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.retryAt = undefined;
  }

  private clearConnectionTimers(): void {
    if (this.stableTimer) clearTimeout(this.stableTimer);
    if (this.watchdogTimer) clearTimeout(this.watchdogTimer);
    this.stableTimer = undefined;
    this.watchdogTimer = undefined;
  }

  /** Ends the current socket and detaches from it, so at most one socket is ever alive. */
  private dropSocket(): void {
    this.clearConnectionTimers();
    const old = this.socket;
    this.socket = undefined;
    this.generation++;
    if (!old) return;
    try {
      old.ev.removeAllListeners();
    } catch {
      // a half-built socket may not have listeners yet
    }
    try {
      old.end(undefined);
    } catch (err) {
      this.log.debug({ err }, 'ending the previous WhatsApp socket failed');
    }
  }

  private setStatus(status: SessionState['status']): void {
    if (status !== this.status) this.since = Date.now();
    this.status = status;
  }

  /** Opens a new socket (closing any previous one). Never throws: a failure schedules the next attempt. */
  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.clearRetry();
    this.dropSocket();
    const generation = this.generation;
    this.setStatus(this.status === 'qr' ? 'qr' : 'connecting');
    this.attempts.record();
    let socket: WhatsAppSocket;
    try {
      const auth = this.auth ?? (await this.loadAuth());
      const version = await this.versions.current();
      if (this.versions.lastError) this.log.warn({ reason: this.versions.lastError, using: version ? version.join('.') : 'the version bundled with Baileys' }, 'could not fetch the current WhatsApp Web version; trying again before the next connection');
      if (generation !== this.generation || this.stopped) return;
      const baileysLog = this.log.child({ part: 'baileys' }, { level: this.options.baileysLogLevel?.trim() || 'warn' });
      // An in-memory cache in front of the file store: Baileys reads the same keys many times per message.
      if (this.cachedKeys?.source !== auth.state.keys) this.cachedKeys = { source: auth.state.keys, keys: makeCacheableSignalKeyStore(auth.state.keys, baileysLog as never) };
      socket = await this.makeSocket({
        auth: { creds: auth.state.creds, keys: this.cachedKeys.keys },
        // Contacts' status updates are not decrypted unless asked for: nothing here uses them.
        shouldIgnoreJid: (jid: string) => Boolean(isJidStatusBroadcast(jid)) && !this.options.receiveStatusUpdates,
        logger: baileysLog as never,
        browser: Browsers.ubuntu('Chrome'),
        markOnlineOnConnect: false,
        syncFullHistory: false,
        msgRetryCounterCache: this.retryCounter,
        getMessage: async (key: WAMessageKey) => this.getMessage(key),
        // Baileys queries the group on a miss and forgets the answer; fetching (once) and storing it here saves
        // a query per group message and the rate-overlimit (429) errors that come with many.
        cachedGroupMetadata: async (jid: string) => this.groups.getOrFetch(jid, () => (this.socket ? this.socket.groupMetadata(jid) : Promise.reject(new Error('not connected')))),
        ...(version ? { version } : {}),
        ...(this.options.socketUrl ? { waWebSocketUrl: this.options.socketUrl.url } : {}),
      });
    } catch (err) {
      if (err instanceof AuthStateCorruptError) {
        this.log.error({ file: err.file }, err.message);
        this.lastError = err.message;
        this.setStatus('offline');
        return;
      }
      this.onClose(generation, err as Error);
      return;
    }
    if (generation !== this.generation || this.stopped) {
      // stop() or another connect() ran while the socket was being built.
      try {
        socket.end(undefined);
      } catch {
        /* already closed */
      }
      return;
    }
    this.socket = socket;
    this.attach(socket, generation);
  }

  private current(generation: number): boolean {
    return generation === this.generation && !this.stopped;
  }

  private attach(socket: WhatsAppSocket, generation: number): void {
    let pairingRequested = false;
    socket.ev.on('creds.update', (update) => {
      if (!this.auth) return;
      Object.assign(this.auth.state.creds, update);
      this.auth.saveCreds().catch((err) => this.log.error({ err }, 'could not save the WhatsApp credentials'));
    });
    socket.ev.on('connection.update', (update) => {
      if (!this.current(generation)) return;
      try {
        this.sendStatus.onConnectionUpdate(update);
        if (update.qr) {
          this.onQr(update.qr, socket, pairingRequested);
          pairingRequested = true;
        }
        if (update.isNewLogin) {
          // Scanned: the QR is spent; WhatsApp now asks for a restart (515) and the session opens.
          this.newLogin = true;
          this.qr = undefined;
          this.pairingCode = undefined;
          this.setStatus('connecting');
        }
        if (update.connection === 'open') this.onOpen();
        if (update.connection === 'close') this.onClose(generation, update.lastDisconnect?.error);
      } catch (err) {
        this.log.error({ err }, 'handling a WhatsApp connection update failed');
      }
    });
    socket.ev.on('messages.upsert', (upsert) => {
      if (!this.current(generation)) return;
      this.lastMessageAt = Date.now();
      this.inboundChain = this.inboundChain.then(() => this.onUpsert(upsert)).catch((err) => this.log.error({ err }, 'handling incoming WhatsApp messages failed'));
    });
    socket.ev.on('lid-mapping.update', (pair) => this.learn(pair.pn, pair.lid));
    socket.ev.on('messaging-history.set', (history) => {
      for (const pair of history.lidPnMappings ?? []) this.learn(pair.pn, pair.lid);
    });
    const learnContacts = (contacts: Array<{ id?: string; lid?: string; phoneNumber?: string }>) => {
      for (const c of contacts) this.learn(c.phoneNumber ?? (c.id && !isLid(c.id) ? c.id : undefined), c.lid ?? (c.id && isLid(c.id) ? c.id : undefined));
    };
    socket.ev.on('contacts.upsert', learnContacts);
    socket.ev.on('contacts.update', learnContacts);
    // Full payloads (new groups, and every group when WhatsApp marks the list dirty) are stored as they are;
    // partial ones are applied to the cached entry. No query is made here: a burst of them hit rate limits.
    socket.ev.on('groups.upsert', (groups) => this.groups.applyUpdates(groups));
    socket.ev.on('groups.update', (updates) => {
      this.groups.applyUpdates(updates);
      for (const u of updates) if (u.id && u.ephemeralDuration !== undefined) this.timers.set(u.id, u.ephemeralDuration || 0);
    });
    socket.ev.on('group-participants.update', (u) => this.groups.applyParticipants(u));
    socket.ev.on('messages.update', (updates) => {
      if (!this.current(generation)) return;
      this.lastMessageAt = Date.now();
      this.sendStatus.onUpdates(updates);
    });
    // Delivery and read receipts in groups: message traffic too.
    socket.ev.on('message-receipt.update', () => {
      if (this.current(generation)) this.lastMessageAt = Date.now();
    });
  }

  /** True while WhatsApp restricts the account (463 / reach-out time-lock): sending should pause. */
  isRestricted(): boolean {
    return Boolean(this.sendStatus.current());
  }

  /** The restriction in force, if any. */
  restriction(): Restriction | undefined {
    return this.sendStatus.current();
  }

  /**
   * Called with the restriction when WhatsApp restricts the account, and with undefined when it is lifted.
   * Returns a function that removes the listener.
   */
  onRestrictionChange(listener: (restriction: Restriction | undefined) => void): () => void {
    this.sendStatus.events.on('restricted', listener);
    return () => this.sendStatus.events.off('restricted', listener);
  }

  /** Sends WhatsApp reported as failed after the fact, by error code (for metrics). */
  sendFailures(): Record<string, number> {
    return this.sendStatus.failureCounts();
  }

  private learn(phone: string | null | undefined, lid: string | null | undefined): void {
    if (this.links?.add(plainJid(phone), plainJid(lid))) this.log.debug({ phone: plainJid(phone), lid: plainJid(lid) }, 'learnt a phone ↔ LID pair');
  }

  private webAddress(): string {
    return this.options.webAddress?.() ?? 'the web page (its address is in the "web server listening" line)';
  }

  private onQr(qr: string, socket: WhatsAppSocket, pairingRequested: boolean): void {
    this.qr = qr;
    this.attempt = 0;
    this.lastError = undefined;
    this.setStatus('qr');
    if (this.pairingPhone && !this.auth?.state.creds.registered) {
      if (pairingRequested) return;
      socket
        .requestPairingCode(this.pairingPhone)
        .then((code) => {
          this.pairingCode = code;
          this.log.info({ pairingCode: code, phone: this.pairingPhone }, `pairing code ${code}: on the phone open WhatsApp → Linked devices → Link a device → "Link with phone number instead" and type it`);
        })
        .catch((err) => this.log.error({ err }, `could not get a pairing code for ${this.pairingPhone}; scan the QR at ${this.webAddress()} instead`));
      return;
    }
    this.log.info(`WhatsApp is not linked: scan the QR code with the phone (WhatsApp → Linked devices → Link a device); it is printed below and shown at ${this.webAddress()}`);
    const print = this.options.printQr ?? ((code: string) => void defaultPrintQr(code).catch((err) => this.log.warn({ err }, 'could not print the QR code in the terminal')));
    print(qr);
  }

  private onOpen(): void {
    const creds = this.auth?.state.creds;
    const me = creds?.me;
    this.me = { id: plainJid(me?.id), lid: plainJid(me?.lid), name: me?.name ?? me?.notify ?? undefined };
    this.setStatus('linked');
    this.qr = undefined;
    this.pairingCode = undefined;
    this.lastError = undefined;
    this.logoutsInARow = 0;
    this.clearRetry();
    this.clearConnectionTimers();
    // Start the failure count over only once the connection has proved stable: one that opens and fails at once
    // must keep backing off, not loop every two seconds.
    this.stableTimer = setTimeout(() => {
      this.stableTimer = undefined;
      this.attempt = 0;
    }, this.backoff.stableMs);
    this.lastMessageAt = Date.now();
    this.armWatchdog(this.generation);
    const solved = this.problem;
    this.problem = undefined;
    // The credentials just opened a connection: they are the good copy a corrupt creds.json is restored from.
    const auth = this.auth;
    void auth?.keepGoodCopy().catch((err) => this.log.warn({ err }, 'could not keep the good copy of the WhatsApp credentials (creds.json.bak)'));
    if (auth?.recovery) this.notices.recover(CREDS_RESTORED_INCIDENT, 'WhatsApp connected with the restored credentials: the session works.');
    if (this.loggedOut) {
      this.loggedOut = false;
      this.notices.recover('logged-out', 'WhatsApp is linked again: the bot reads and answers messages.');
    }
    if (solved === 'bad-session') this.notices.recover('whatsapp-bad-session', 'WhatsApp is connected again: the session works.');
    if (solved === 'client-too-old') this.notices.recover('whatsapp-client-too-old', 'WhatsApp accepted the current WhatsApp Web version: connected again.');
    const myPN = this.me.id ? userPart(this.me.id) : undefined;
    const myLID = this.me.lid ? userPart(this.me.lid) : undefined;
    if (this.newLogin) {
      this.newLogin = false;
      this.log.info({ myPN, myLID }, 'Own LID session created successfully');
    }
    if (myLID) this.log.info({ myLID, myPN }, `myLID: ${myLID} (phone ${myPN ?? 'unknown'})`);
    else this.log.warn({ myPN }, `WhatsApp did not tell this device its own LID (myLID unknown, phone ${myPN ?? 'unknown'}): mentions by LID in groups can be missed; add the bot's LID to targetUserIds when you know it`);
    if (this.me.id && this.me.lid) this.learn(this.me.id, this.me.lid);
    for (const wake of this.openWaiters.splice(0)) wake();
    const hook = Promise.resolve()
      .then(() => this.options.onLinked?.({ ...this.me }))
      .catch((err) => this.log.warn({ err }, 'the login hook failed'));
    this.handling.add(hook);
    void hook.finally(() => this.handling.delete(hook));
  }

  /** Reconnects a connection that stays open but carries no message traffic for `silentMs` (a deaf session). */
  private armWatchdog(generation: number): void {
    const silentMs = this.options.silentMs ?? DEFAULT_SILENT_MS;
    const check = () => {
      this.watchdogTimer = undefined;
      if (!this.current(generation) || this.status !== 'linked') return;
      const quietFor = Date.now() - this.lastMessageAt;
      if (quietFor < silentMs) {
        this.watchdogTimer = setTimeout(check, silentMs - quietFor);
        return;
      }
      const minutes = Math.round(quietFor / 60_000);
      this.log.warn({ silentMinutes: minutes }, `no message, receipt or ack from WhatsApp for ${minutes} min although the connection looks open (a silent session): reconnecting, so a session that stopped delivering comes back`);
      this.problem = 'silent';
      this.onClose(generation, Object.assign(new Error(`no message traffic from WhatsApp for ${minutes} min`), { output: { statusCode: 408 } }));
    };
    this.watchdogTimer = setTimeout(check, silentMs);
  }

  private scheduleConnect(delayMs: number): void {
    this.retryAt = Date.now() + delayMs;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delayMs);
  }

  private onClose(generation: number, error: Error | undefined): void {
    if (!this.current(generation)) return;
    const closing = this.socket;
    this.socket = undefined;
    this.generation++;
    this.clearConnectionTimers();
    if (closing) {
      try {
        closing.ev.removeAllListeners();
        closing.end(undefined);
      } catch {
        /* already closed */
      }
    }
    // Baileys closes with a Boom error whose output.statusCode is the DisconnectReason.
    const statusCode = (error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode;
    let decision = decideReconnect(statusCode, this.attempt, this.backoff, this.random);
    if (decision.action === 'logged-out' && this.logoutsInARow > 0) {
      // A fresh session was refused right away: do not spin; back off like any other failure.
      decision = decideReconnect(undefined, this.attempt, this.backoff, this.random);
      decision = { ...decision, reason: 'logged out again right after a fresh start' };
    }
    const detail = error?.message && !decision.reason.includes(error.message) ? `${decision.reason}: ${error.message}` : decision.reason;
    this.lastError = detail;
    // Every close the transport comes back from (all but a 403 stop) counts as a reconnect, by its close reason.
    if (decision.action !== 'stop') this.options.onReconnect?.(describeClose(statusCode));
    if (decision.action === 'restart-now' && this.restarts.waitMs() > 0) {
      decision = { ...(decideReconnect(undefined, this.attempt, this.backoff, this.random) as { action: 'backoff'; delayMs: number }), reason: decision.reason, warning: `WhatsApp asked for ${this.backoff.maxRestartsPerWindow} restarts within ${Math.round(this.backoff.windowMs / 60_000)} min; backing off instead of restarting at once` };
    }
    if (decision.action === 'restart-now') {
      this.restarts.record();
      this.log.info({ reason: detail }, 'WhatsApp asked for a restart of the connection (normal right after linking): reconnecting now');
      void this.connect();
      return;
    }
    if (decision.action === 'stop') {
      this.problem = 'forbidden';
      this.lastError = `${detail}: not reconnecting`;
      this.setStatus('offline');
      this.qr = undefined;
      this.log.error({ reason: detail }, decision.warning);
      this.notices.raise('whatsapp-forbidden', 'WhatsApp refused this account (403 forbidden: banned or blocked from WhatsApp Web). The bot stopped reconnecting; check the account on the phone, then restart the bot.', { linkDown: true });
      for (const wake of this.openWaiters.splice(0)) wake();
      return;
    }
    if (decision.action === 'logged-out') {
      this.logoutsInARow++;
      if (this.relinking) {
        this.relinking = false;
        this.log.warn({ folder: this.authDir }, 'relink: this device is logged out and the stored session cleared; scan the new QR code to link again');
      } else {
        this.log.warn({ reason: detail, folder: this.authDir }, 'WhatsApp logged this device out (removed on the phone): cleared the stored session; scan the new QR code to link again');
        this.loggedOut = true;
        this.notices.raise('logged-out', `WhatsApp logged the bot out (the linked device was removed on the phone). It answers nothing until it is linked again: scan the new QR at ${this.webAddress()}.`, { linkDown: true });
      }
      this.me = {};
      this.qr = undefined;
      this.setStatus('connecting');
      const auth = this.auth;
      this.auth = undefined;
      void (async () => {
        try {
          await auth?.clear();
        } catch (err) {
          this.log.error({ err, folder: this.authDir }, 'could not clear the WhatsApp session folder');
        }
        if (this.current(this.generation)) await this.connect();
      })();
      return;
    }
    this.attempt++;
    if (decision.action === 'refetch-version') {
      this.problem = 'client-too-old';
      this.versions.invalidate();
      this.notices.raise('whatsapp-client-too-old', 'WhatsApp refused the WhatsApp Web version the bot announced as too old (405); the bot fetches the current version and reconnects.');
    } else if (statusCode === 500) {
      this.problem = 'bad-session';
      this.notices.raise('whatsapp-bad-session', 'WhatsApp reports a bad session (500) for this bot. It keeps retrying; if this persists, unlink the device on the phone, delete data/session_auth and link again.');
    } else if (this.problem !== 'silent') this.problem = undefined;
    // However the closes come, never more than maxPerWindow attempts per window.
    const delayMs = Math.max(decision.delayMs, this.attempts.waitMs());
    this.setStatus('offline');
    this.qr = undefined;
    const seconds = Math.round(delayMs / 1000);
    if (delayMs > decision.delayMs) this.log.warn({ reason: detail, attempts: this.attempts.count(), retryInSeconds: seconds }, `${this.attempts.count()} connection attempts within ${Math.round(this.backoff.windowMs / 60_000)} min: waiting ${seconds}s before the next one`);
    else if (decision.warning) this.log.warn({ reason: detail, retryInSeconds: seconds }, `${decision.warning}; next try in ${seconds}s`);
    else this.log.warn({ reason: detail, attempt: this.attempt, retryInSeconds: seconds }, `cannot reach WhatsApp (${detail}); next try in ${seconds}s`);
    this.scheduleConnect(delayMs);
  }

  /**
   * The owner's "relink" (dashboard): logs this linked device out of WhatsApp, clears the stored session and shows a
   * new QR. Without an open connection the session is cleared here and a fresh connection asks for a new link.
   */
  async relink(): Promise<void> {
    const socket = this.socket;
    this.log.warn('relink asked for: logging this device out of WhatsApp and starting a new link');
    if (socket?.logout && this.status === 'linked') {
      this.relinking = true;
      try {
        // Baileys then closes with 401 (logged out): the close handler clears the session and reconnects for a QR.
        await socket.logout('relink asked for by the owner');
        return;
      } catch (err) {
        this.relinking = false;
        this.log.warn({ err }, 'WhatsApp did not confirm the logout; clearing the stored session here (remove the old device on the phone under Linked devices)');
      }
    }
    this.generation++;
    this.clearRetry();
    this.clearConnectionTimers();
    this.socket = undefined;
    try {
      socket?.ev.removeAllListeners();
      socket?.end(undefined);
    } catch {
      /* already closed */
    }
    const auth = this.auth;
    this.auth = undefined;
    this.me = {};
    this.qr = undefined;
    this.setStatus('connecting');
    await auth?.clear();
    await this.connect();
  }

  private getMessage(key: WAMessageKey): proto.IMessage | undefined {
    if (!key.id) return undefined;
    return this.resend?.get(key.id) ?? this.sent.get(key.id)?.message ?? this.inbound.get(`${plainJid(key.remoteJid)}|${key.id}`)?.message ?? undefined;
  }

  /** Decryption failures since start (WhatsApp delivered a message this device could not decrypt). */
  decryptionFailures(): number {
    return this.decryptFailures;
  }

  /** Edits and deletes-for-everyone of earlier messages, handed to the core's listeners. Returns true when it was one. */
  private async onProtocol(raw: WAMessage): Promise<boolean> {
    const protocol = normalizeMessageContent(raw.message)?.protocolMessage;
    const target = protocol?.key?.id;
    if (!protocol || !target || !raw.key?.remoteJid) return false;
    const Type = waProto.Message.ProtocolMessage.Type;
    if (protocol.type !== Type.REVOKE && protocol.type !== Type.MESSAGE_EDIT) return false;
    let chatId = plainJid(raw.key.remoteJid) ?? raw.key.remoteJid;
    const isGroup = chatId.endsWith('@g.us');
    // Who sent the change is the envelope's sender (authenticated by the session), never `protocol.key.participant`,
    // which only claims whose message it targets: the core honours it for the sender's own messages (or an admin's).
    const sender = isGroup ? plainJid(raw.key.participant) : chatId;
    const who = sender && this.identity ? await this.identity.resolve(sender, plainJid(isGroup ? raw.key.participantAlt : raw.key.remoteJidAlt)) : { id: sender };
    if (!isGroup && who.id) chatId = who.id;
    const by: ChangeSender = raw.key.fromMe ? { ids: this.ownIds(), fromMe: true } : { ids: [who.id, 'alt' in who ? who.alt : undefined].filter((id): id is string => Boolean(id)) };
    try {
      if (protocol.type === Type.REVOKE) {
        this.log.debug({ chat: chatId, id: target }, 'a message was deleted for everyone');
        await this.events.onRevoke?.(chatId, target, by);
      } else {
        const text = textOf(normalizeMessageContent(protocol.editedMessage));
        this.log.debug({ chat: chatId, id: target }, 'a message was edited');
        await this.events.onEdit?.(chatId, target, text, by);
      }
    } catch (err) {
      this.log.warn({ err, chat: chatId, id: target }, 'applying an edit or delete failed');
    }
    return true;
  }

  private async onUpsert(upsert: BaileysEventMap['messages.upsert']): Promise<void> {
    for (const raw of upsert.messages) {
      try {
        await this.onRaw(raw, upsert.type);
      } catch (err) {
        this.log.error({ err, id: raw.key?.id }, 'an incoming WhatsApp message could not be handled');
      }
    }
  }

  private async onRaw(raw: WAMessage, type: BaileysEventMap['messages.upsert']['type']): Promise<void> {
    const key = raw.key;
    this.learn(key?.participant, key?.participantAlt);
    this.learn(key?.remoteJid, key?.remoteJidAlt);
    this.learn(key?.participantAlt, key?.participant);
    this.learn(key?.remoteJidAlt, key?.remoteJid);
    const timer = expirationOf(raw);
    if (timer !== undefined && key?.remoteJid) {
      const chat = plainJid(key.remoteJid) ?? key.remoteJid;
      this.timers.set(chat, timer);
      const other = this.links?.altOf(chat);
      if (other) this.timers.set(other, timer);
      // A group's new setting goes into its cached metadata too: else the next (partial) metadata update would
      // bring the old timer back, and Baileys' `cachedGroupMetadata` would disagree for up to the cache's 6 h.
      if (chat.endsWith('@g.us') && timerChangeOf(raw) !== undefined) this.groups.applyUpdates([{ id: chat, ephemeralDuration: timer }]);
    }
    if (raw.messageStubType === waProto.WebMessageInfo.StubType.CIPHERTEXT) {
      this.decryptFailures++;
      this.log.warn({ id: key?.id, chat: key?.remoteJid, sender: key?.participant ?? key?.remoteJid, reason: raw.messageStubParameters?.[0], total: this.decryptFailures }, 'a WhatsApp message could not be decrypted (WhatsApp retries it; if this repeats, the session keys with that contact are out of step)');
      return;
    }
    if (await this.onProtocol(raw)) return;
    if (key?.fromMe && (!key.id || this.ownIdsSent.get(key.id) || this.sent.get(key.id) || this.resend?.get(key.id))) {
      this.log.debug({ id: key.id }, 'ignored a message sent by the bot itself');
      return;
    }
    const socket = this.socket;
    const download: MediaDownloader = (m) => {
      if (this.options.download) return this.options.download(m, socket as WhatsAppSocket);
      if (!socket) return Promise.reject(new Error('WhatsApp is not connected, so the media cannot be downloaded right now'));
      return defaultDownload(m, socket, this.log.child({ part: 'baileys' }, { level: 'warn' }));
    };
    const result = mapIncoming(raw, { ownIds: this.ownIds(), download, altIdOf: (id) => this.links?.altOf(id) });
    if ('ignored' in result) {
      this.log.debug({ id: key?.id, chat: key?.remoteJid, reason: result.ignored }, 'ignored a WhatsApp message');
      // Linked devices never receive view-once media: say so in a private chat instead of staying silent.
      // Baileys 7 (rc14) marks view-once media sent to a linked device on the key (`isViewOnce`) and leaves no body.
      if ((isViewOnce(raw.message) || key?.isViewOnce) && key?.remoteJid && !key.remoteJid.endsWith('@g.us') && !isJidStatusBroadcast(key.remoteJid)) {
        const work = this.refuseViewOnce(raw).catch((err) => this.log.warn({ err }, 'could not answer a view-once message'));
        this.handling.add(work);
        void work.finally(() => this.handling.delete(work));
      }
      return;
    }
    const message = result.message;
    await this.canonicalize(message);
    if (!message.isGroup && !message.fromMe) this.addressing.noteArrival(message.chatId, plainJid(key.remoteJid));
    if (timer !== undefined) this.timers.set(message.chatId, timer);
    if (!(await this.seen!.firstTime(message.chatId, message.id, key.participant ?? ''))) {
      this.log.debug({ id: message.id, chat: message.chatId, type }, 'ignored a duplicate delivery of a message already handled');
      return;
    }
    this.inbound.set(`${message.chatId}|${message.id}`, raw);
    const maxAge = this.options.maxOfflineAgeMs ?? DEFAULT_MAX_OFFLINE_AGE_MS;
    // Also for `notify`: placeholder resends of messages up to 14 days old arrive as notify.
    if (Date.now() - message.timestamp > maxAge) {
      this.log.info({ id: message.id, chat: message.chatId, ageMinutes: Math.round((Date.now() - message.timestamp) / 60_000) }, 'not answering a message that arrived while the bot was offline and is too old');
      return;
    }
    await this.deliver(message);
  }

  /**
   * One sender id per person and one chat id per private chat, whatever form WhatsApp used: the phone jid when it
   * is known (config lists owners by phone), else the LID; the other form becomes `senderAltId`.
   */
  private async canonicalize(message: IncomingMessage): Promise<void> {
    if (!this.identity) return;
    if (message.fromMe) {
      // The owner typing on the phone: the chat is named as the contact's incoming messages name it.
      if (!message.isGroup) message.chatId = (await this.identity.resolve(message.chatId, message.senderAltId)).id;
      delete message.senderAltId;
      return;
    }
    for (const m of message.mentions) this.identity.noteLid(m);
    const rawSender = message.senderId;
    const who = await this.identity.resolve(rawSender, message.senderAltId);
    message.senderId = who.id;
    if (who.alt && who.alt !== who.id) message.senderAltId = who.alt;
    else delete message.senderAltId;
    if (!message.isGroup) {
      message.chatId = who.id;
      await this.identity.adoptChatId(who.id, who.alt);
    }
  }

  private async refuseViewOnce(raw: WAMessage): Promise<void> {
    const chatId = plainJid(raw.key.remoteJid) ?? raw.key.remoteJid!;
    if (!(await this.seen!.firstTime(chatId, raw.key.id ?? '', 'view-once'))) return;
    this.log.info({ chat: chatId, id: raw.key.id }, 'refused a view-once message (linked devices cannot open it)');
    await this.sendText(chatId, 'I cannot open view-once photos, videos or voice notes (WhatsApp shows them only on the phone). Please send it again as a normal message.', { quotedId: undefined }).catch((err) => this.log.warn({ err }, 'could not answer a view-once message'));
  }

  private async deliver(message: IncomingMessage): Promise<void> {
    const handler = this.handler;
    if (!handler) return;
    // Queue, don't wait: the bot orders messages per chat itself, and one slow answer must not hold up others.
    const work = handler(message).catch((err) => this.log.error({ err, chat: message.chatId }, 'the bot failed on a WhatsApp message'));
    this.handling.add(work);
    void work.finally(() => this.handling.delete(work));
  }

  /** Resolves when every message received so far has been mapped and handled, and the login hook ran (tests, graceful stop). */
  async idle(): Promise<void> {
    for (;;) {
      const chain = this.inboundChain;
      await chain.catch(() => undefined);
      await Promise.all([...this.handling]);
      if (chain === this.inboundChain && this.handling.size === 0) return;
    }
  }

  /** Waits (up to sendWaitMs) for a linked socket; throws a clear error when there is none. */
  private async ready(): Promise<WhatsAppSocket> {
    if (this.status === 'linked' && this.socket) return this.socket;
    if (this.stopped) throw new Error('WhatsApp transport is stopped');
    const waitMs = this.options.sendWaitMs ?? 30_000;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      this.openWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    if (this.status === 'linked' && this.socket) return this.socket;
    throw new Error(`WhatsApp is not connected (${this.lastError ?? this.status}); the message was not sent`);
  }

  /** Jids for `@<digits>` mentions in an outgoing text: a known LID stays a LID, anything else is a phone jid. */
  private mentionsIn(text: string): string[] {
    const jids = new Set<string>();
    for (const match of text.matchAll(/@(\d{5,20})\b/g)) {
      const digits = match[1];
      const isOwnLid = this.me.lid && userPart(this.me.lid) === digits;
      // A LID-only user (no phone known) must be mentioned as `<lid>@lid`; as a phone jid the mention is broken.
      jids.add(isOwnLid || this.identity?.isLid(digits) ? `${digits}@lid` : `${digits}@s.whatsapp.net`);
    }
    return [...jids];
  }

  private remember(sent: WAMessage | undefined, chatId: string, answers?: string): SentMessage {
    const id = sent?.key?.id ?? '';
    if (sent && id) this.sent.set(id, sent);
    void this.resend?.add(id, chatId, sent?.message, answers);
    this.sendStatus.track(id, chatId);
    return { id };
  }

  /** Options of a new message: the quote, and the chat's disappearing timer (else recipients see "will not disappear"). */
  /** The send options with an id of the bot's choosing, noted first, so WhatsApp's echo of it is known as the bot's. */
  private ownSendOptions(chatId: string, quotedId: string | undefined): MiscMessageGenerationOptions {
    const messageId = generateMessageIDV2(this.me.id);
    this.ownIdsSent.set(messageId, true);
    return { ...this.sendOptions(chatId, quotedId), messageId };
  }

  private sendOptions(chatId: string, quotedId: string | undefined): MiscMessageGenerationOptions | undefined {
    const quoted = quotedId ? this.inbound.get(`${chatId}|${quotedId}`) ?? this.sent.get(quotedId) : undefined;
    const timer = this.timers.get(chatId) ?? this.groups.get(chatId)?.ephemeralDuration;
    if (!quoted && !timer) return undefined;
    return { ...(quoted ? { quoted } : {}), ...(timer ? { ephemeralExpiration: timer } : {}) };
  }

  async sendText(chatId: string, text: string, options?: SendOptions): Promise<SentMessage> {
    const socket = await this.ready();
    const mentions = this.mentionsIn(text);
    const sent = await socket.sendMessage(await this.addressing.addressOf(chatId), { text, ...(mentions.length ? { mentions } : {}) }, this.ownSendOptions(chatId, options?.quotedId));
    return this.remember(sent, chatId, options?.answers);
  }

  async editText(chatId: string, messageId: string, text: string): Promise<boolean> {
    if (!messageId) return false;
    try {
      const original = this.sent.get(messageId);
      const sentAt = original?.messageTimestamp ? Number(original.messageTimestamp) * 1000 : undefined;
      if (sentAt && Date.now() - sentAt > EDIT_WINDOW_MS) {
        // WhatsApp drops edits past its window silently; report the failure so the caller sends anew.
        this.log.info({ chat: chatId, id: messageId, ageMinutes: Math.round((Date.now() - sentAt) / 60_000) }, 'not editing a message older than WhatsApp\'s 15-minute edit window');
        return false;
      }
      const socket = await this.ready();
      // An edit goes where the original went.
      const to = original?.key?.remoteJid ?? (await this.addressing.addressOf(chatId));
      const key: WAMessageKey = original?.key ?? { remoteJid: to, id: messageId, fromMe: true };
      const edit = await socket.sendMessage(to, { text, edit: key });
      // Filed under whoever the edited message answered (its new text is about them as much as the old).
      void this.resend?.add(edit?.key?.id, chatId, edit?.message, this.resend.answered(messageId));
      return true;
    } catch (err) {
      this.log.warn({ err, chat: chatId }, 'editing a WhatsApp message failed; sending anew');
      return false;
    }
  }

  async react(chatId: string, messageId: string, emoji: string): Promise<void> {
    const socket = await this.ready();
    const to = await this.addressing.addressOf(chatId);
    const key: WAMessageKey = this.inbound.get(`${chatId}|${messageId}`)?.key ?? this.sent.get(messageId)?.key ?? { remoteJid: to, id: messageId, fromMe: false };
    const reaction = await socket.sendMessage(to, { react: { text: emoji, key } });
    void this.resend?.add(reaction?.key?.id, chatId, reaction?.message);
  }

  async sendMedia(chatId: string, media: OutgoingMedia, options?: SendOptions): Promise<SentMessage> {
    const info = await stat(media.path).catch(() => undefined);
    if (!info?.isFile()) throw new Error(`cannot send the ${media.kind}: file not found: ${media.path}`);
    const socket = await this.ready();
    const file = { url: media.path };
    let content: AnyMessageContent;
    switch (media.kind) {
      case 'voice':
        // WhatsApp plays voice notes only as Ogg/Opus; other formats arrive as a broken voice note.
        content = { audio: file, ptt: true, mimetype: media.mimetype ?? 'audio/ogg; codecs=opus' };
        break;
      case 'audio':
        content = { audio: file, ptt: false, mimetype: media.mimetype ?? mimeFor(media.path, 'audio/mpeg') };
        break;
      case 'image':
        content = { image: file, ...(media.caption ? { caption: media.caption } : {}), ...(media.mimetype ? { mimetype: media.mimetype } : {}) };
        break;
      case 'video': {
        const jpegThumbnail = this.options.ffmpegPath ? await videoThumbnail(this.options.ffmpegPath, media.path) : undefined;
        content = { video: file, mimetype: media.mimetype ?? mimeFor(media.path, 'video/mp4'), ...(media.caption ? { caption: media.caption } : {}), ...(jpegThumbnail ? { jpegThumbnail } : {}) };
        break;
      }
      case 'document':
        content = { document: file, mimetype: media.mimetype ?? mimeFor(media.path), fileName: media.fileName ?? path.basename(media.path), ...(media.caption ? { caption: media.caption } : {}) };
        break;
      default:
        throw new Error(`cannot send media of kind ${String((media as { kind: unknown }).kind)}`);
    }
    const sent = await socket.sendMessage(await this.addressing.addressOf(chatId), content, this.ownSendOptions(chatId, options?.quotedId));
    return this.remember(sent, chatId, options?.answers);
  }

  /** Blue ticks on a message the bot took up (config `whatsapp.readReceipts`), with the key it arrived under. */
  markRead(message: IncomingMessage): void {
    const socket = this.socket;
    const raw = this.inbound.get(`${message.chatId}|${message.id}`);
    if (!socket || this.status !== 'linked' || !raw?.key || raw.key.fromMe) return;
    if (this.options.preferences?.().readReceipts === false) return;
    // Not waited for: Baileys first asks WhatsApp for the account's privacy settings, and the answer must not wait on it.
    const work = socket.readMessages([raw.key]).catch((err) => this.log.debug({ err, chat: message.chatId }, 'read receipt failed'));
    this.handling.add(work);
    void work.finally(() => this.handling.delete(work));
  }

  async setTyping(chatId: string, typing: boolean): Promise<void> {
    const socket = this.socket;
    if (!socket || this.status !== 'linked') return;
    const to = await this.addressing.addressOf(chatId);
    // Config `whatsapp.presence`: "online" while typing (some phones show "typing…" only then), offline again after,
    // so the owner's phone keeps its notifications (the bot connects as offline: markOnlineOnConnect is false).
    // Offline only once no chat is being typed in any more.
    const presence = this.options.preferences?.().presence !== false;
    const failed = (err: unknown) => this.log.debug({ err }, 'typing indicator failed');
    if (typing) this.typingIn.add(chatId);
    else this.typingIn.delete(chatId);
    if (typing && presence) await socket.sendPresenceUpdate('available').catch(failed);
    await socket.sendPresenceUpdate(typing ? 'composing' : 'paused', to).catch(failed);
    if (!typing && presence && this.typingIn.size === 0) await socket.sendPresenceUpdate('unavailable').catch(failed);
  }

  ownIds(): string[] {
    return [this.me.id, this.me.lid].filter((id): id is string => Boolean(id));
  }

  /** Admin of a group, from its (cached) metadata; a participant may be listed by phone jid or by LID. */
  /** The adapter's own files in the privacy controls (see whatsapp-privacy.ts). */
  privacyParticipants(): PrivacyParticipant[] {
    return whatsAppPrivacy(() => ({ resend: this.resend, links: this.links }));
  }

  async isGroupAdmin(chatId: string, userId: string): Promise<boolean> {
    const socket = this.socket;
    const meta = socket ? await this.groups.getOrFetch(chatId, () => socket.groupMetadata(chatId)) : this.groups.get(chatId);
    if (!meta) return false;
    const ids = [userId, this.links?.altOf(userId)].filter(Boolean);
    return meta.participants.some((p) => Boolean(p.admin) && [p.id, p.lid, p.phoneNumber].some((id) => id && ids.includes(id)));
  }

  session(): SessionState {
    return {
      status: this.status,
      ...(this.status === 'qr' && this.qr ? { qr: this.qr } : {}),
      ...(this.me.id || this.me.lid ? { me: { ...this.me } } : {}),
      since: this.since,
      ...(this.status !== 'linked' && this.lastError ? { lastError: this.lastError } : {}),
      ...(this.retryAt ? { retryAt: this.retryAt } : {}),
      ...(this.pairingCode ? { pairingCode: this.pairingCode } : {}),
      ...(this.problem ? { problem: this.problem } : {}),
      ...(this.isRestricted() ? { restricted: this.restriction() } : {}),
    };
  }
}
