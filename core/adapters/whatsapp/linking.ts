import type { Logger } from '../../services/log/logger.js';
import type { WhatsAppTransportOptions } from './options.js';
import type { WhatsAppSocket } from './socket.js';

/** Digits of a phone number given as `+62 812-345`, or undefined when it is not one. */
export function pairingDigits(value: string | undefined): string | undefined {
  const digits = (value ?? '').replace(/[\s()+-]/g, '');
  return /^\d{6,20}$/.test(digits) ? digits : undefined;
}

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
 * socket.ev.on('connection.update', (u) => u.qr && linking.show(u.qr, socket, requested, registered));
 */
export class Linking {
  /** The QR on offer now (until scanned, or the connection closes). */
  qr: string | undefined;
  /** The pairing code WhatsApp gave for PAIRING_PHONE, until the link is made. */
  pairingCode: string | undefined;
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

  /** A QR arrived on `socket`: print it, or (phone number set, not registered yet) ask once for a pairing code. */
  show(qr: string, socket: WhatsAppSocket, pairingRequested: boolean, registered: boolean): void {
    this.qr = qr;
    if (this.pairingPhone && !registered) {
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

  /** A pairing code for `phone` asked for by the owner (dashboard) while the QR is on offer; kept until the link is made. */
  async requestCode(socket: WhatsAppSocket, phone: string): Promise<string> {
    const digits = pairingDigits(phone);
    if (!digits) throw new Error('not a phone number: give it in international form, digits only (e.g. 6281234567890)');
    const code = await socket.requestPairingCode(digits);
    this.pairingCode = code;
    this.log.info({ pairingCode: code, phone: digits }, `pairing code ${code} asked for from the dashboard: on the phone open WhatsApp → Linked devices → Link a device → "Link with phone number instead" and type it`);
    return code;
  }

  /** The link is made (or the session starts over): neither QR nor pairing code is shown any more. */
  done(): void {
    this.qr = undefined;
    this.pairingCode = undefined;
  }
}
