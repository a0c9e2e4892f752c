import { html, type SafeHtml } from './html.js';

/**
 * The one way the web pages write a moment and a size, so every view reads alike: UTC to the second
 * (`2026-11-26 15:02:07 UTC`) and MB or GB with one decimal (`512.0 MB`, `12.3 GB`; 1 MB = 1024 × 1024 bytes).
 */

/**
 * A moment (unix ms) as `YYYY-MM-DD HH:MM:SS UTC`.
 * @example formatTime(Date.UTC(2026, 10, 26, 15, 2, 7)) // '2026-11-26 15:02:07 UTC'
 */
export function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}

const MB = 1024 * 1024;
const GB = 1024 * MB;

/**
 * A size in bytes as MB below 1 GB, else GB, with one decimal.
 * @example formatBytes(256 * 1024) // '0.3 MB'
 * @example formatBytes(5 * 1024 ** 3) // '5.0 GB'
 */
export function formatBytes(bytes: number): string {
  if (bytes >= GB) return `${(bytes / GB).toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 })} GB`;
  return `${(bytes / MB).toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 })} MB`;
}

/**
 * A `<time>` element for a moment: machine-readable ISO in `datetime`, `formatTime` as its text.
 * @example html`<p>since ${timeTag(ms)}</p>`
 */
export function timeTag(ms: number): SafeHtml {
  return html`<time datetime="${new Date(ms).toISOString()}">${formatTime(ms)}</time>`;
}

/**
 * A pairing code as the owner types it, with the time left to type it (the transport shows only a live code).
 * @example pairingCodeHtml({ pairingCode: 'ABCD1234', pairingCodeExpiresAt: Date.now() + 90_000 }) // … 1 min 30 s left …
 */
export function pairingCodeHtml(session: { pairingCode?: string; pairingCodeExpiresAt?: number }, now = Date.now()): SafeHtml | '' {
  if (!session.pairingCode) return '';
  const left = session.pairingCodeExpiresAt ? Math.max(0, Math.round((session.pairingCodeExpiresAt - now) / 1000)) : undefined;
  const within = left === undefined ? '' : html` — type it within ${left >= 60 ? `${Math.floor(left / 60)} min ${left % 60} s` : `${left} s`} (until ${timeTag(session.pairingCodeExpiresAt!)}); then a new QR code follows`;
  return html`<p>Pairing code: <b class="code">${session.pairingCode}</b> (Linked devices → Link with phone number instead)${within}</p>`;
}
