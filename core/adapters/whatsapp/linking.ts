import type { Logger } from '../../services/log/logger.js';
import type { WhatsAppTransportOptions } from './options.js';
import type { WhatsAppSocket } from './socket.js';

/** Digits of a phone number given as `+62 812-345`, or undefined when it is not one. */
export function pairingDigits(value: string | undefined): string | undefined {
  const digits = (value ?? '').replace(/[\s()+-]/g, '');
  return /^\d{6,20}$/.test(digits) ? digits : undefined;
}

/**
 * How long a linking socket lives after its first QR, by Baileys' schedule (Socket/socket.js `genPairQR`): the first
 * QR reference 60 s, each next one 20 s, and WhatsApp hands out six; then Baileys ends the socket ("QR refs attempts
 * ended"). A pairing code is bound to the socket it was asked on, so it runs out at the same time at the latest.
 */
export const LINKING_SOCKET_MS = 60_000 + 5 * 20_000;

async function defaultPrintQr(qr: string): Promise<void> {
  const qrcode = (await import('qrcode-terminal')).default;
  qrcode.generate(qr, { small: true }, (art) => process.stderr.write(`\n${art}\n`));
}

/**
 * Linking the account: shows each QR WhatsApp offers (in the terminal and, through the session state, on `GET /`),
 * or asks once per socket for a pairing code when a phone number is set (PAIRING_PHONE), and keeps what the owner
 * needs to see until the link is made.
 *
 * @example
 * const linking = new Linking(options, log);
 * socket.ev.on('connection.update', (u) => u.qr && linking.show(u.qr, socket, requested, credentials.linked));
 */
export class Linking {
  /** The QR on offer now (until scanned, or the connection closes). */
  qr: string | undefined;
  /** The pairing code WhatsApp gave (PAIRING_PHONE or the dashboard), until the link is made or its socket ends. */
  private code: { code: string; expiresAt: number } | undefined;
  /** When the current linking socket ends by Baileys' QR schedule (its first QR + LINKING_SOCKET_MS). */
  private socketEndsAt: number | undefined;
  /** PAIRING_PHONE's code is asked for by itself once; after one ran out untyped, a new one only when asked for. */
  private automaticCodeSpent = false;
  private readonly pairingPhone: string | undefined;

  constructor(
    private readonly options: WhatsAppTransportOptions,
    private readonly log: Logger,
  ) {
    const phoneSetting = options.pairingPhone;
    this.pairingPhone = pairingDigits(phoneSetting);
    if (phoneSetting?.trim() && !this.pairingPhone) this.log.error({ PAIRING_PHONE: phoneSetting }, 'PAIRING_PHONE must be the phone number in international form, digits only (e.g. 6281234567890); using the QR code instead');
  }

  /** Where the QR page is, in words. */
  webAddress(): string {
    return this.options.webAddress?.() ?? 'the web page (its address is in the "web server listening" line)';
  }

  /** The pairing code while it can still be typed, with when it runs out (unix ms). */
  liveCode(now = Date.now()): { code: string; expiresAt: number } | undefined {
    return this.code && this.code.expiresAt > now ? { ...this.code } : undefined;
  }

  /** The pairing code while it can still be typed. */
  get pairingCode(): string | undefined {
    return this.liveCode()?.code;
  }

  private keepCode(code: string): void {
    this.code = { code, expiresAt: this.socketEndsAt ?? Date.now() + LINKING_SOCKET_MS };
  }

  /** A QR arrived on `socket` (`pairingRequested`: not its first): print it, or (phone number set) ask once for a pairing code. */
  show(qr: string, socket: WhatsAppSocket, pairingRequested: boolean, linked: boolean): void {
    this.qr = qr;
    if (!pairingRequested) this.socketEndsAt = Date.now() + LINKING_SOCKET_MS;
    if (this.pairingPhone && !linked && !this.automaticCodeSpent) {
      if (pairingRequested) return;
      socket
        .requestPairingCode(this.pairingPhone)
        .then((code) => {
          this.keepCode(code);
          this.log.info({ pairingCode: code, phone: this.pairingPhone }, `pairing code ${code}: on the phone open WhatsApp → Linked devices → Link a device → "Link with phone number instead" and type it`);
        })
        .catch((err) => this.log.error({ err }, `could not get a pairing code for ${this.pairingPhone}; scan the QR at ${this.webAddress()} instead`));
      return;
    }
    this.log.info(`WhatsApp is not linked: scan the QR code with the phone (WhatsApp → Linked devices → Link a device); it is printed below and shown at ${this.webAddress()}`);
    const print = this.options.printQr ?? ((code: string) => void defaultPrintQr(code).catch((err) => this.log.warn({ err }, 'could not print the QR code in the terminal')));
    print(qr);
  }

  /** A pairing code for `phone` asked for by the owner (dashboard) while the QR is on offer; kept until the link is made. */
  async requestCode(socket: WhatsAppSocket, phone: string): Promise<string> {
    const digits = pairingDigits(phone);
    if (!digits) throw new Error('not a phone number: give it in international form, digits only (e.g. 6281234567890)');
    const code = await socket.requestPairingCode(digits);
    this.keepCode(code);
    this.log.info({ pairingCode: code, phone: digits }, `pairing code ${code} asked for from the dashboard: on the phone open WhatsApp → Linked devices → Link a device → "Link with phone number instead" and type it`);
    return code;
  }

  /**
   * The linking socket ended before a phone linked: its QR and pairing code are dead. A code still showing ran out
   * untyped; PAIRING_PHONE's is then not asked for again by itself (each request pushes a notification to the phone),
   * only from the dashboard, and the QR comes back meanwhile.
   */
  ended(): void {
    const code = this.code;
    if (code) {
      this.log.warn({ pairingCode: code.code }, `the pairing code ${code.code} was not typed in time and ran out: a new QR code follows at ${this.webAddress()}; ask for a new pairing code on the dashboard (Status → link with a phone number)${this.pairingPhone ? ' or restart the bot' : ''}`);
      if (this.pairingPhone) this.automaticCodeSpent = true;
    }
    this.qr = undefined;
    this.code = undefined;
    this.socketEndsAt = undefined;
  }

  /** The link is made (or the session starts over): neither QR nor pairing code is shown any more. */
  done(): void {
    this.qr = undefined;
    this.code = undefined;
    this.socketEndsAt = undefined;
    this.automaticCodeSpent = false;
  }
}
