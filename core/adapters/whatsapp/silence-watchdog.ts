/**
 * Keep-alive answers come every 30 s even from a session that no longer delivers messages (Baileys #2331), so the
 * watchdog counts message traffic only; reconnecting a merely quiet session costs a login and loses nothing (what
 * WhatsApp holds for the device arrives at the reconnect).
 */
export const DEFAULT_SILENT_MS = 30 * 60_000;

/**
 * Notices an open connection over which no message traffic (messages, receipts, acks of sent messages) arrives for
 * `silentMs`: a session that looks connected but stopped delivering.
 *
 * @example
 * const watchdog = new SilenceWatchdog(30 * 60_000);
 * watchdog.arm(() => linked, (quietForMs) => reconnect());
 * socket.ev.on('messages.upsert', () => watchdog.noteTraffic());
 */
export class SilenceWatchdog {
  private timer: NodeJS.Timeout | undefined;
  /** When message traffic (not keep-alive answers) last arrived on the current connection. */
  private lastTrafficAt = 0;

  constructor(private readonly silentMs = DEFAULT_SILENT_MS) {}

  noteTraffic(): void {
    this.lastTrafficAt = Date.now();
  }

  /**
   * Starts watching a connection that just opened (its open counts as traffic). Checks while `watching()` holds;
   * calls `onSilent` once with how long it has been quiet.
   */
  arm(watching: () => boolean, onSilent: (quietForMs: number) => void): void {
    this.noteTraffic();
    const check = () => {
      this.timer = undefined;
      if (!watching()) return;
      const quietFor = Date.now() - this.lastTrafficAt;
      if (quietFor < this.silentMs) {
        this.timer = setTimeout(check, this.silentMs - quietFor);
        return;
      }
      onSilent(quietFor);
    };
    this.timer = setTimeout(check, this.silentMs);
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
