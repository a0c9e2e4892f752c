import path from 'node:path';
import { Browsers, isJidStatusBroadcast, type GroupMetadata, type proto, type WAMessageKey } from '@whiskeysockets/baileys';
import type { Logger } from '../../services/log/logger.js';
import type { OwnerNotifier } from '../../services/notices/owner-notifier.js';
import { userPart } from '../../kernel/port/ids.js';
import type { SessionState } from '../../kernel/port/transport.js';
import { AuthStateCorruptError, type DurableAuthState } from './auth-store.js';
import { TtlCache } from './caches.js';
import type { WhatsAppTransportOptions } from './options.js';
import type { PendingWork } from './pending-work.js';
import { AttemptWindow, decideReconnect, DEFAULT_BACKOFF, describeClose, type BackoffSettings } from './reconnect-policy.js';
import type { SocketFactory, SocketListener, SocketOptions, WhatsAppSocket } from './socket.js';
import { Linking } from './linking.js';
import { SessionCredentials } from './session-credentials.js';
import { SilenceWatchdog } from './silence-watchdog.js';
import { bundledVersionFirst, WebVersionSource, type VersionFetcher } from './web-version.js';

/** The account's own ids, as the credentials name them. */
export interface OwnIds {
  id?: string;
  lid?: string;
  name?: string;
}

/** What the layers above hand the connection. */
export interface ConnectionHooks {
  /** Each new socket, before the connection's own listeners: the layers above attach theirs. */
  attach: SocketListener;
  /** Baileys' `getMessage`: a message the bot sent or received, for a device that asks for it again. */
  getMessage: (key: WAMessageKey) => proto.IMessage | undefined;
  /** Baileys' `cachedGroupMetadata`. */
  cachedGroupMetadata: (jid: string) => Promise<GroupMetadata | undefined>;
  /** At every open, with the own ids (before anyone waiting for the link is woken). */
  opened: (me: OwnIds) => void;
  /** The link's status changed (see TransportEvents.onSessionChange). */
  statusChanged?: (status: SessionState['status'], previous: SessionState['status']) => void;
}

async function defaultMakeSocket(options: SocketOptions): Promise<WhatsAppSocket> {
  const baileys = await import('@whiskeysockets/baileys');
  return baileys.makeWASocket(options) as unknown as WhatsAppSocket;
}

async function defaultFetchVersion(): ReturnType<VersionFetcher> {
  const { fetchLatestWaWebVersion } = await import('@whiskeysockets/baileys');
  return fetchLatestWaWebVersion({ signal: AbortSignal.timeout(5000) });
}

/**
 * The connection layer (Baileys' socket.ts): one socket at a time, its state as the dashboard shows it, and what
 * happens at each open and close — reconnects by the close code (515 at once, 401 → new QR, 440 long backoff,
 * anything else exponential backoff with jitter), the owners told of what needs them, the owner's relink. Its parts:
 * linking.ts (QR or pairing code), session-credentials.ts (`data/session_auth/`), silence-watchdog.ts (a session that
 * stays open but goes silent). The layers above attach their listeners to each socket it opens (`hooks.attach`).
 */
export class WhatsAppConnection {
  private readonly log: Logger;
  private readonly makeSocket: SocketFactory;
  private readonly random: () => number;
  private readonly backoff: BackoffSettings;
  private readonly credentials: SessionCredentials;
  private currentSocket: WhatsAppSocket | undefined;
  private generation = 0;
  private status: SessionState['status'] = 'offline';
  private since = Date.now();
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
  private readonly watchdog: SilenceWatchdog;
  private readonly linking: Linking;
  private readonly versions: WebVersionSource;
  private readonly attempts: AttemptWindow;
  private readonly restarts: AttemptWindow;
  private stopped = false;
  private me: OwnIds = {};
  private openWaiters: Array<() => void> = [];
  private readonly retryCounter = new TtlCache(60 * 60_000);

  constructor(
    private readonly options: WhatsAppTransportOptions,
    private readonly notices: OwnerNotifier,
    private readonly pending: PendingWork,
    private readonly hooks: ConnectionHooks,
  ) {
    this.log = options.log;
    this.makeSocket = options.makeSocket ?? defaultMakeSocket;
    this.random = options.random ?? Math.random;
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    const socketUrl = options.socketUrl;
    // Another endpoint than WhatsApp's own: the version is not looked up on WhatsApp's site until that endpoint
    // refuses the bundled one (405), so a test server never makes the bot reach the internet.
    this.versions = new WebVersionSource(socketUrl ? bundledVersionFirst(options.fetchVersion ?? defaultFetchVersion) : (options.fetchVersion ?? defaultFetchVersion), options.versionRefreshMs);
    if (socketUrl) this.log.warn({ WA_WEBSOCKET_URL: socketUrl.shown }, `WA_WEBSOCKET_URL is set: WhatsApp connects to ${socketUrl.shown} instead of WhatsApp's own server. That endpoint sees the whole session (every message and the account's keys): use it only for a test server or a proxy you run`);
    this.attempts = new AttemptWindow(this.backoff.windowMs, this.backoff.maxPerWindow);
    this.restarts = new AttemptWindow(this.backoff.windowMs, this.backoff.maxRestartsPerWindow);
    this.credentials = new SessionCredentials(options.authDir ?? path.join(options.dataDir, 'session_auth'), this.log, notices, options);
    this.linking = new Linking(options, this.log);
    this.watchdog = new SilenceWatchdog(options.silentMs);
  }

  /** The open socket, if any. */
  get socket(): WhatsAppSocket | undefined {
    return this.currentSocket;
  }

  /** True while the account is linked and a socket is open. */
  isLinked(): boolean {
    return this.status === 'linked' && Boolean(this.currentSocket);
  }

  ownIds(): string[] {
    return [this.me.id, this.me.lid].filter((id): id is string => Boolean(id));
  }

  /** The account's own LID, when known. */
  ownLid(): string | undefined {
    return this.me.lid;
  }

  /** The own id as Baileys generates message ids from it. */
  ownId(): string | undefined {
    return this.me.id;
  }

  /** Message traffic arrived (messages, receipts, acks): the watchdog's evidence that the session delivers. */
  noteTraffic(): void {
    this.watchdog.noteTraffic();
  }

  /** Allows connecting again (after a stop); the stores are opened next, then `open()`. */
  resume(): void {
    this.stopped = false;
  }

  /**
   * Loads the session and starts connecting; resolves once the first socket is created (not when it is linked).
   * Rejects with AuthStateCorruptError (naming the file) when creds.json is corrupt.
   */
  async open(): Promise<void> {
    await this.loadAuth();
    await this.connect();
  }

  private async loadAuth(): Promise<DurableAuthState> {
    const auth = await this.credentials.load();
    if (auth.restored && this.credentials.linked && auth.state.creds.me?.id) this.me = this.credentials.me();
    this.log.info({ folder: this.credentials.folder }, auth.restored ? 'WhatsApp session found: reconnecting without a new scan' : 'no WhatsApp session stored yet: a QR code (or pairing code) will follow');
    return auth;
  }

  /** Closes the socket (without logging out) and connects no more; `flush()` then saves the session. */
  stop(): void {
    this.stopped = true;
    this.clearRetry();
    this.clearConnectionTimers();
    this.dropSocket();
    this.status = 'offline';
    for (const wake of this.openWaiters.splice(0)) wake();
  }

  /** Resolves when the session's files are on disk. */
  async flush(): Promise<void> {
    await this.credentials.flush();
  }

  private clearRetry(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.retryAt = undefined;
  }

  private clearConnectionTimers(): void {
    if (this.stableTimer) clearTimeout(this.stableTimer);
    this.stableTimer = undefined;
    this.watchdog.clear();
  }

  /** Ends the current socket and detaches from it, so at most one socket is ever alive. */
  private dropSocket(): void {
    this.clearConnectionTimers();
    const old = this.currentSocket;
    this.currentSocket = undefined;
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
    const previous = this.status;
    if (status === previous) return;
    this.since = Date.now();
    this.status = status;
    this.hooks.statusChanged?.(status, previous);
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
      const auth = this.credentials.current ?? (await this.loadAuth());
      const version = await this.versions.current();
      if (this.versions.lastError) this.log.warn({ reason: this.versions.lastError, using: version ? version.join('.') : 'the version bundled with Baileys' }, 'could not fetch the current WhatsApp Web version; trying again before the next connection');
      if (generation !== this.generation || this.stopped) return;
      const baileysLog = this.log.child({ part: 'baileys' }, { level: this.options.baileysLogLevel?.trim() || 'warn' });
      socket = await this.makeSocket({
        auth: this.credentials.socketAuth(auth, baileysLog),
        // Contacts' status updates are not decrypted unless asked for: nothing here uses them.
        shouldIgnoreJid: (jid: string) => Boolean(isJidStatusBroadcast(jid)) && !this.options.receiveStatusUpdates,
        logger: baileysLog as never,
        browser: Browsers.ubuntu('Chrome'),
        markOnlineOnConnect: false,
        syncFullHistory: false,
        msgRetryCounterCache: this.retryCounter,
        getMessage: async (key: WAMessageKey) => this.hooks.getMessage(key),
        // Baileys queries the group on a miss and forgets the answer; fetching (once) and storing it here saves
        // a query per group message and the rate-overlimit (429) errors that come with many.
        cachedGroupMetadata: async (jid: string) => this.hooks.cachedGroupMetadata(jid),
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
    this.currentSocket = socket;
    this.attach(socket, generation);
  }

  private current(generation: number): boolean {
    return generation === this.generation && !this.stopped;
  }

  private attach(socket: WhatsAppSocket, generation: number): void {
    // The layers above first: the restriction a connection.update carries is noted before the update is acted on.
    this.hooks.attach(socket, () => this.current(generation));
    let pairingRequested = false;
    this.credentials.attach(socket);
    socket.ev.on('connection.update', (update) => {
      if (!this.current(generation)) return;
      try {
        if (update.qr) {
          this.onQr(update.qr, socket, pairingRequested);
          pairingRequested = true;
        }
        if (update.isNewLogin) {
          // Scanned: the QR is spent; WhatsApp now asks for a restart (515) and the session opens.
          this.newLogin = true;
          this.linking.done();
          this.setStatus('connecting');
        }
        if (update.connection === 'open') this.onOpen();
        if (update.connection === 'close') this.onClose(generation, update.lastDisconnect?.error);
      } catch (err) {
        this.log.error({ err }, 'handling a WhatsApp connection update failed');
      }
    });
  }

  private onQr(qr: string, socket: WhatsAppSocket, pairingRequested: boolean): void {
    this.attempt = 0;
    this.lastError = undefined;
    this.setStatus('qr');
    this.linking.show(qr, socket, pairingRequested, this.credentials.linked);
  }

  private onOpen(): void {
    this.me = this.credentials.me();
    this.setStatus('linked');
    this.linking.done();
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
    this.armWatchdog(this.generation);
    const solved = this.problem;
    this.problem = undefined;
    this.credentials.opened();
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
    this.hooks.opened({ ...this.me });
    for (const wake of this.openWaiters.splice(0)) wake();
    const hook = Promise.resolve()
      .then(() => this.options.onLinked?.({ ...this.me }))
      .catch((err) => this.log.warn({ err }, 'the login hook failed'));
    this.pending.track(hook);
  }

  /** Reconnects a connection that stays open but carries no message traffic for `silentMs` (a deaf session). */
  private armWatchdog(generation: number): void {
    this.watchdog.arm(
      () => this.current(generation) && this.status === 'linked',
      (quietFor) => {
        const minutes = Math.round(quietFor / 60_000);
        this.log.warn({ silentMinutes: minutes }, `no message, receipt or ack from WhatsApp for ${minutes} min although the connection looks open (a silent session): reconnecting, so a session that stopped delivering comes back`);
        this.problem = 'silent';
        this.onClose(generation, Object.assign(new Error(`no message traffic from WhatsApp for ${minutes} min`), { output: { statusCode: 408 } }));
      },
    );
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
    const closing = this.currentSocket;
    this.currentSocket = undefined;
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
    if (!this.credentials.linked) {
      // A socket that ended before any phone linked (its QRs ran out, a pairing code was not typed, a drop): its QR
      // and code are dead, and the phone a pairing-code request wrote into the session is dropped, or the next
      // connection would log in as it and WhatsApp would answer 401. Nothing was linked, so nothing is logged out.
      this.linking.ended();
      if (this.credentials.resetLinking()) this.log.info('linking did not finish on this connection: starting over with a new QR code');
      if (decision.action === 'logged-out') decision = { ...decideReconnect(undefined, this.attempt, this.backoff, this.random), reason: 'WhatsApp refused a login for a device that was never linked (401)' };
    }
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
      this.linking.qr = undefined;
      this.log.error({ reason: detail }, decision.warning);
      this.notices.raise('whatsapp-forbidden', 'WhatsApp refused this account (403 forbidden: banned or blocked from WhatsApp Web). The bot stopped reconnecting; check the account on the phone, then restart the bot.', { linkDown: true });
      for (const wake of this.openWaiters.splice(0)) wake();
      return;
    }
    if (decision.action === 'logged-out') {
      this.logoutsInARow++;
      if (this.relinking) {
        this.relinking = false;
        this.log.warn({ folder: this.credentials.folder }, 'relink: this device is logged out and the stored session cleared; scan the new QR code to link again');
      } else {
        this.log.warn({ reason: detail, folder: this.credentials.folder }, 'WhatsApp logged this device out (removed on the phone): cleared the stored session; scan the new QR code to link again');
        this.loggedOut = true;
        this.notices.raise('logged-out', `WhatsApp logged the bot out (the linked device was removed on the phone). It answers nothing until it is linked again: scan the new QR at ${this.linking.webAddress()}.`, { linkDown: true });
      }
      this.me = {};
      this.linking.qr = undefined;
      this.setStatus('connecting');
      const auth = this.credentials.forget();
      void (async () => {
        try {
          await auth?.clear();
        } catch (err) {
          this.log.error({ err, folder: this.credentials.folder }, 'could not clear the WhatsApp session folder');
        }
        if (this.current(this.generation)) await this.connect();
      })();
      return;
    }
    this.attempt++;
    if (decision.action === 'refetch-version' && this.versions.announcedUnchecked()) {
      // WA_WEBSOCKET_URL announces the bundled version first (no look-up); a proxy of WhatsApp refuses a retired
      // one at every start: that is the look-up's cue, not something the owner must hear about.
      this.versions.invalidate();
      this.log.info({ reason: detail }, 'the WA_WEBSOCKET_URL endpoint refused the WhatsApp Web version bundled with Baileys (405): looking the current version up');
    } else if (decision.action === 'refetch-version') {
      this.problem = 'client-too-old';
      this.versions.invalidate();
      this.notices.raise('whatsapp-client-too-old', 'WhatsApp refused the WhatsApp Web version the bot announced as too old (405, "update your client"); the bot fetches the current version and reconnects.');
    } else if (statusCode === 500) {
      this.problem = 'bad-session';
      this.notices.raise('whatsapp-bad-session', 'WhatsApp reports a bad session (500) for this bot. It keeps retrying; if this persists, unlink the device on the phone, delete data/session_auth and link again.');
    } else if (this.problem !== 'silent') this.problem = undefined;
    // However the closes come, never more than maxPerWindow attempts per window.
    const delayMs = Math.max(decision.delayMs, this.attempts.waitMs());
    this.setStatus('offline');
    this.linking.qr = undefined;
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
    const socket = this.currentSocket;
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
    this.currentSocket = undefined;
    try {
      socket?.ev.removeAllListeners();
      socket?.end(undefined);
    } catch {
      /* already closed */
    }
    const auth = this.credentials.forget();
    this.me = {};
    this.linking.qr = undefined;
    this.setStatus('connecting');
    await auth?.clear();
    await this.connect();
  }

  /**
   * The owner's pairing-code login (dashboard): while a QR is on offer, asks WhatsApp for a code for `phone`
   * instead; the code is shown until the link is made. Rejects, in words, when linked or not connected yet.
   */
  async requestPairingCode(phone: string): Promise<string> {
    if (this.status === 'linked') throw new Error('WhatsApp is linked already: relink first to link another phone');
    const socket = this.currentSocket;
    if (this.status !== 'qr' || !socket) throw new Error('WhatsApp is not ready to link yet (no QR code on offer): wait until the QR code shows, then ask again');
    return this.linking.requestCode(socket, phone);
  }

  /** Waits (up to sendWaitMs) for a linked socket; throws a clear error when there is none. */
  async ready(): Promise<WhatsAppSocket> {
    if (this.status === 'linked' && this.currentSocket) return this.currentSocket;
    if (this.stopped) throw new Error('WhatsApp transport is stopped');
    const waitMs = this.options.sendWaitMs ?? 30_000;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      this.openWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    if (this.status === 'linked' && this.currentSocket) return this.currentSocket;
    throw new Error(`WhatsApp is not connected (${this.lastError ?? this.status}); the message was not sent`);
  }

  /** The session as the dashboard and /readyz show it (the restriction is the outbound layer's to add). */
  session(): SessionState {
    const code = this.linking.liveCode();
    return {
      status: this.status,
      ...(this.status === 'qr' && this.linking.qr ? { qr: this.linking.qr } : {}),
      ...(this.me.id || this.me.lid ? { me: { ...this.me } } : {}),
      since: this.since,
      ...(this.status !== 'linked' && this.lastError ? { lastError: this.lastError } : {}),
      ...(this.retryAt ? { retryAt: this.retryAt } : {}),
      ...(code && this.status !== 'linked' ? { pairingCode: code.code, pairingCodeExpiresAt: code.expiresAt } : {}),
      ...(this.problem ? { problem: this.problem } : {}),
    };
  }
}
