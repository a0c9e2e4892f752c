import { createDecipheriv, createHmac, timingSafeEqual } from 'node:crypto';
import { DEFAULT_ORIGIN, extractMessageContent, getContentType, getMediaKeys, type WAMessage } from '@whiskeysockets/baileys';
import { MediaTooLargeError } from '../../api/errors.js';
import type { MediaKind } from '../../kernel/port/message.js';

/** WhatsApp's media CDN: every media URL of a real message is on one of its hosts. */
const WHATSAPP_MEDIA_HOST = /(^|\.)whatsapp\.net$/i;
const DEFAULT_MEDIA_ORIGIN = 'https://mmg.whatsapp.net';
const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])$/i;
/** The last bytes of an encrypted media file: the first 10 bytes of HMAC-SHA256(macKey, iv ‖ ciphertext). */
const MAC_LENGTH = 10;

/** What one download may bring, and where from. */
export interface MediaDownloadLimits {
  kind: MediaKind;
  /** Plain bytes at most: more stops the download (the connection is closed) with MediaTooLargeError. */
  maxBytes: number;
  /** Whole download (all of it, not per chunk). Default 5 minutes. */
  timeoutMs?: number;
  /**
   * TESTS ONLY, set programmatically (never from settings): origins besides WhatsApp's media hosts a media URL may
   * point to (the test kit's loopback media server).
   */
  extraOrigins?: readonly string[];
  /** TESTS ONLY: URLs on loopback addresses (127.0.0.0/8, localhost, [::1]) are fetched too (EGRESS_ALLOW_PRIVATE_HOSTS). */
  loopbackForTests?: boolean;
  /** Asks the phone to upload media again whose link expired (Baileys' `updateMediaMessage`). */
  reupload?: (message: WAMessage) => Promise<WAMessage>;
}

/** WhatsApp answered that it no longer has the media, or refused it. */
class MediaHttpError extends Error {
  constructor(readonly status: number) {
    super(`WhatsApp's media server answered HTTP ${status}`);
  }
}

/**
 * Downloads and decrypts a media message's bytes as Baileys' `downloadMediaMessage` does, but bounded by the bytes
 * actually received: the fetch is aborted as soon as the plain bytes pass `maxBytes` (the sender's `fileLength` is never
 * trusted), so a file claimed as 1 KB and served as 600 MB costs at most the limit. The URL must be on WhatsApp's media
 * hosts (a message's `url` and `directPath` come from its sender, who could point them anywhere), and the file's MAC is
 * checked. Media whose link expired (404/410) is asked for again once, as Baileys does.
 *
 * @example
 * const bytes = await downloadMedia(raw, { kind: 'document', maxBytes: 20 * 1024 * 1024, reupload });
 */
export async function downloadMedia(message: WAMessage, limits: MediaDownloadLimits): Promise<Buffer> {
  try {
    return await downloadOnce(message, limits);
  } catch (err) {
    if (!(err instanceof MediaHttpError) || ![404, 410].includes(err.status) || !limits.reupload) throw err;
    return downloadOnce(await limits.reupload(message), limits);
  }
}

interface MediaFields {
  url?: string | null;
  directPath?: string | null;
  mediaKey?: Uint8Array | string | null;
}

async function downloadOnce(message: WAMessage, limits: MediaDownloadLimits): Promise<Buffer> {
  const content = extractMessageContent(message.message);
  const type = content ? getContentType(content) : undefined;
  const media = type ? ((content as Record<string, unknown>)[type] as MediaFields | undefined) : undefined;
  if (!type || !media || typeof media !== 'object' || !media.mediaKey) throw new Error('not a media message');
  const url = mediaUrl(media, limits.extraOrigins ?? [], limits.loopbackForTests === true);
  const { cipherKey, iv, macKey } = (await getMediaKeys(media.mediaKey, type.replace('Message', '') as never)) as { cipherKey: Buffer; iv: Buffer; macKey: Buffer };
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error('the media download timed out')), limits.timeoutMs ?? 300_000);
  try {
    const response = await fetch(url, { headers: { Origin: DEFAULT_ORIGIN }, signal: abort.signal });
    if (!response.ok || !response.body) {
      await response.body?.cancel().catch(() => undefined);
      throw new MediaHttpError(response.status);
    }
    const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv);
    const mac = createHmac('sha256', macKey).update(iv);
    const plain: Buffer[] = [];
    let plainBytes = 0;
    // The MAC trails the ciphertext: the last bytes seen are held back until the next chunk (or the end) shows they
    // are not the MAC.
    let tail = Buffer.alloc(0);
    const take = (cipherPart: Buffer) => {
      if (!cipherPart.length) return;
      mac.update(cipherPart);
      const part = decipher.update(cipherPart);
      plainBytes += part.length;
      // Stop as soon as the bytes received pass the limit: the rest of the answer is never read.
      if (plainBytes > limits.maxBytes) {
        abort.abort(new MediaTooLargeError(limits.kind, limits.maxBytes));
        throw new MediaTooLargeError(limits.kind, limits.maxBytes);
      }
      plain.push(part);
    };
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      const data = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (data.length >= MAC_LENGTH) {
        // No copy of the chunk: the held-back bytes go first, then all of it but its own last bytes.
        take(tail);
        take(data.subarray(0, data.length - MAC_LENGTH));
        tail = Buffer.from(data.subarray(data.length - MAC_LENGTH));
      } else {
        const joined = Buffer.concat([tail, data]);
        take(joined.subarray(0, Math.max(0, joined.length - MAC_LENGTH)));
        tail = Buffer.from(joined.subarray(Math.max(0, joined.length - MAC_LENGTH)));
      }
    }
    if (tail.length !== MAC_LENGTH || !timingSafeEqual(mac.digest().subarray(0, MAC_LENGTH), tail)) throw new Error('the media file is damaged (its MAC does not match)');
    let last: Buffer;
    try {
      last = decipher.final();
    } catch {
      throw new Error('the media file is damaged (it does not decrypt)');
    }
    if (plainBytes + last.length > limits.maxBytes) throw new MediaTooLargeError(limits.kind, limits.maxBytes);
    plain.push(last);
    return Buffer.concat(plain);
  } catch (err) {
    if (abort.signal.aborted && !(err instanceof MediaTooLargeError)) throw abort.signal.reason instanceof Error ? abort.signal.reason : err;
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** The URL to fetch: the message's `directPath` on its URL's host, else its `url`; only ever on WhatsApp's media hosts. */
function mediaUrl(media: MediaFields, extraOrigins: readonly string[], loopback: boolean): string {
  const allowed = (raw: string | null | undefined): URL | undefined => {
    if (!raw) return undefined;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return undefined;
    }
    if (extraOrigins.includes(url.origin)) return url;
    if (loopback && /^https?:$/.test(url.protocol) && LOOPBACK_HOST.test(url.hostname)) return url;
    return url.protocol === 'https:' && WHATSAPP_MEDIA_HOST.test(url.hostname) && !url.username && !url.password ? url : undefined;
  };
  const fromUrl = allowed(media.url);
  if (media.directPath) {
    if (!media.directPath.startsWith('/')) throw new Error("the media's path is not a path on WhatsApp's media server");
    return `${fromUrl?.origin ?? DEFAULT_MEDIA_ORIGIN}${media.directPath}`;
  }
  if (!fromUrl) throw new Error("the media's link does not point to WhatsApp's media server, so it was not fetched");
  return fromUrl.href;
}
