import type { WAMessage } from '@whiskeysockets/baileys';
import type { Logger } from '../../services/log/logger.js';
import type { DownloadOptions, MediaKind } from '../../kernel/port/message.js';
import type { OwnerNotifier } from '../../services/notices/owner-notifier.js';
import type { DailySweeps } from '../../services/store/retention.js';
import type { DurableAuthOptions } from './auth-store.js';
import type { BackoffSettings } from './reconnect-policy.js';
import type { SocketFactory, WhatsAppSocket } from './socket.js';
import type { VersionFetcher } from './web-version.js';
import type { Jail } from '../../services/jail/jail.js';

/** The owner's WhatsApp preferences, read at each use (the dashboard may change them while the bot runs). */
export interface WhatsAppPreferences {
  /** Blue ticks on messages the bot took up (config `whatsapp.readReceipts`). Default true. */
  readReceipts?: boolean;
  /** "Online" while typing (config `whatsapp.presence`). Default true. */
  presence?: boolean;
  /**
   * The bot runs on the owner's own number (config `account.mode: "self-chat"`): the "Message yourself" chat is the
   * operator's chat, where owner notices go. Default false.
   */
  selfChat?: boolean;
}

/**
 * Plain options: the adapter reads no config file and no environment; the composition root (app/) hands it what it
 * needs from them (app/whatsapp-settings.ts).
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
  /**
   * The app's daily retention pass (`App.dailySweeps`): the adapter's data past its retention (sent messages past
   * WhatsApp's 14-day resend window) is swept there daily. Unset: swept at each start only.
   */
  dailySweeps?: DailySweeps;
  /** Socket factory (tests inject a fake socket). */
  makeSocket?: SocketFactory;
  /**
   * Media download (default media-download.ts: streamed, stopped past `limit.maxBytes`). A replacement may ignore the
   * limit: the core checks the bytes it returns against it too.
   */
  download?: (message: WAMessage, socket: WhatsAppSocket, limit: DownloadOptions & { kind: MediaKind }) => Promise<Buffer>;
  /**
   * TESTS ONLY, set programmatically (never from settings or the environment): origins besides WhatsApp's media hosts
   * that a received message's media URL may point to (the test kit's loopback `WhatsAppMediaServer`).
   */
  mediaOriginsForTests?: readonly string[];
  /**
   * TESTS ONLY: media URLs on this machine's loopback addresses are fetched too (a wire server's media host). Set from
   * `EGRESS_ALLOW_PRIVATE_HOSTS`, the tests-only switch for every fetch of an untrusted URL; the start log warns.
   */
  mediaLoopbackForTests?: boolean;
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
  /** Called at every login with the own ids (cli/start.ts writes the LID into config.json). */
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
  /** The project's ffmpeg, for video previews (run in `jail`; Baileys never runs the `ffmpeg` on PATH). */
  ffmpegPath?: string;
  /** The core jail video previews are made in; without it videos go without a preview (said in the log). */
  jail?: Jail;
}
