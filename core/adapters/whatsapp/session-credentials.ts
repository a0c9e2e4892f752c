import { makeCacheableSignalKeyStore, type AuthenticationState } from '@whiskeysockets/baileys';
import type { Logger } from '../../services/log/logger.js';
import type { OwnerNotifier } from '../../services/notices/owner-notifier.js';
import { useDurableAuthState, type DurableAuthOptions, type DurableAuthState } from './auth-store.js';
import { CREDS_RESTORED_INCIDENT, credsRecoveryText } from './creds-backup.js';
import { plainJid } from './message-mapper.js';
import type { WhatsAppSocket } from './socket.js';

const DEFAULT_STALE_KEY_MS = 30 * 24 * 60 * 60_000;

/**
 * The linked device's credentials and Signal keys in `data/session_auth/` (auth-store.ts writes them atomically):
 * loaded at each start (old session/sender-key files pruned, a corrupt creds.json restored from its good copy and
 * said loudly), saved at every `creds.update`, kept as the good copy once a connection opened with them, and cleared
 * when the device is logged out.
 *
 * @example
 * const credentials = new SessionCredentials('data/session_auth', log, notices);
 * const auth = await credentials.load();
 * makeWASocket({ auth: credentials.socketAuth(auth, log) });
 */
export class SessionCredentials {
  private auth: DurableAuthState | undefined;
  private cachedKeys: { source: unknown; keys: AuthenticationState['keys'] } | undefined;

  constructor(
    readonly folder: string,
    private readonly log: Logger,
    private readonly notices: OwnerNotifier,
    private readonly options: { staleKeyMs?: number; authOptions?: DurableAuthOptions } = {},
  ) {}

  /** The loaded session, or undefined before the first load and after a logout. */
  get current(): DurableAuthState | undefined {
    return this.auth;
  }

  /**
   * True once a phone linked this device: pair-success gave it an account (QR), or the phone accepted its pairing code
   * (`registered`). Before that the session is only linking, whatever `me` says: Baileys' `requestPairingCode` writes
   * the phone it was asked for into `me` at once, and a connection with `me` set logs in as that phone (WhatsApp: 401).
   */
  get linked(): boolean {
    const creds = this.auth?.state.creds;
    return Boolean(creds?.account || creds?.registered);
  }

  /**
   * Takes a session that never finished linking back to a clean linking state: the `me` and pairing code a pairing-code
   * request wrote are dropped (saved), so the next connection asks for a new QR instead of logging in as a phone that
   * was never linked. True when there was something to drop.
   */
  resetLinking(): boolean {
    const creds = this.auth?.state.creds;
    if (!creds || this.linked || (!creds.me && !creds.pairingCode)) return false;
    delete creds.me;
    creds.pairingCode = undefined;
    this.auth!.saveCreds().catch((err) => this.log.error({ err }, 'could not save the WhatsApp credentials'));
    return true;
  }

  /** The own ids the credentials name (after a login; a restored session has them before it opens). */
  me(): { id?: string; lid?: string; name?: string } {
    const me = this.auth?.state.creds.me;
    return { id: plainJid(me?.id), lid: plainJid(me?.lid), name: me?.name ?? me?.notify ?? undefined };
  }

  /**
   * Loads the session. Rejects with AuthStateCorruptError (naming the file) when creds.json is corrupt and no good
   * copy exists.
   */
  async load(): Promise<DurableAuthState> {
    this.auth = await useDurableAuthState(this.folder, {
      onCorruptKey: (file, reason) => this.log.warn({ file, reason }, 'a WhatsApp session key file was unreadable; treating it as missing'),
      ...this.options.authOptions,
    });
    const staleKeyMs = this.options.staleKeyMs ?? DEFAULT_STALE_KEY_MS;
    const stale = await this.auth.pruneStale(staleKeyMs).catch((err) => {
      this.log.warn({ err }, 'could not prune old WhatsApp session keys');
      return [] as string[];
    });
    if (stale.length) this.log.info({ removed: stale.length }, `removed ${stale.length} session/sender-key files unused for ${Math.round(staleKeyMs / 86_400_000)} days`);
    if (this.resetLinking()) this.log.info({ folder: this.folder }, 'the stored WhatsApp session never finished linking (a pairing code was not typed): starting over with a new QR');
    if (this.auth.recovery) {
      const text = credsRecoveryText(this.auth.recovery, this.folder);
      this.log.error({ folder: this.folder, reason: this.auth.recovery.reason, setAside: this.auth.recovery.setAside }, text);
      this.notices.raise(CREDS_RESTORED_INCIDENT, text);
    }
    return this.auth;
  }

  /** What the socket is built with: the credentials, and an in-memory cache in front of the key files. */
  socketAuth(auth: DurableAuthState, baileysLog: Logger): AuthenticationState {
    // Baileys reads the same keys many times per message.
    if (this.cachedKeys?.source !== auth.state.keys) this.cachedKeys = { source: auth.state.keys, keys: makeCacheableSignalKeyStore(auth.state.keys, baileysLog as never) };
    return { creds: auth.state.creds, keys: this.cachedKeys.keys };
  }

  /** Saves every change of the credentials a socket announces. */
  attach(socket: WhatsAppSocket): void {
    socket.ev.on('creds.update', (update) => {
      if (!this.auth) return;
      Object.assign(this.auth.state.creds, update);
      this.auth.saveCreds().catch((err) => this.log.error({ err }, 'could not save the WhatsApp credentials'));
    });
  }

  /** The credentials just opened a connection: they are the good copy a corrupt creds.json is restored from. */
  opened(): void {
    const auth = this.auth;
    void auth?.keepGoodCopy().catch((err) => this.log.warn({ err }, 'could not keep the good copy of the WhatsApp credentials (creds.json.bak)'));
    if (auth?.recovery) this.notices.recover(CREDS_RESTORED_INCIDENT, 'WhatsApp connected with the restored credentials: the session works.');
  }

  /** Forgets the session (logged out); the returned one is to be cleared from disk. */
  forget(): DurableAuthState | undefined {
    const auth = this.auth;
    this.auth = undefined;
    return auth;
  }

  /** Resolves when the session's files are on disk. */
  async flush(): Promise<void> {
    await this.auth?.flush();
  }
}
