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
  /**
   * Silent reconnects in a row with no traffic between them. A quiet personal bot at night is not deaf: each one
   * doubles the wait before the next (30 min, 1 h, 2 h, then 4 h at most), so it is not cycled all night.
   */
  private quietRounds = 0;

  constructor(private readonly silentMs = DEFAULT_SILENT_MS) {}

  /** Traffic from others arrived: the session delivers, and the wait starts over at `silentMs`. */
  noteTraffic(): void {
    this.lastTrafficAt = Date.now();
    this.quietRounds = 0;
  }

  /** How long the current connection may stay quiet before it is reconnected. */
  private limitMs(): number {
    return this.silentMs * 2 ** Math.min(this.quietRounds, 3);
  }

  /**
   * Starts watching a connection that just opened (its open counts as traffic). Checks while `watching()` holds;
   * calls `onSilent` once with how long it has been quiet.
   */
  arm(watching: () => boolean, onSilent: (quietForMs: number) => void): void {
    this.lastTrafficAt = Date.now();
    const check = () => {
      this.timer = undefined;
      if (!watching()) return;
      const quietFor = Date.now() - this.lastTrafficAt;
      if (quietFor < this.limitMs()) {
        // Checked at least every silentMs: traffic meanwhile brings the limit back to silentMs.
        this.timer = setTimeout(check, Math.min(this.silentMs, this.limitMs() - quietFor));
        return;
      }
      this.quietRounds++;
      onSilent(quietFor);
    };
    this.timer = setTimeout(check, this.silentMs);
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
