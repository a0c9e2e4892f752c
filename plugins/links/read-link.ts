import net from 'node:net';
import type { Jail } from '../../core/index.js';
import { DocumentRefused, DownloadRefused, isPrivateAddress, JailRefused, type EgressPolicy } from '../../core/media.js';
import { fetchPublic, readDocument, type ReadLimits } from '../../core/builtin.js';
import { extractPage, PageTooHeavy, type ReadDeadline } from './extract-page.js';
import { decodeHtml } from './decode-html.js';
import { isVideoLink, TranscriptUnavailable, videoTranscript } from './video-transcript.js';

/** A link read: what it is, its title, its final address, and its text (cut as `note` says). */
export interface LinkRead {
  /** The address read (after redirects). */
  url: string;
  kind: 'page' | 'document' | 'video' | 'text';
  /** What it is, in words: `web page`, `PDF`, `video transcript`. */
  label: string;
  title: string;
  text: string;
  /** What was cut, in words, when not all of it is given. */
  note?: string;
}

/** A link the bot did not read; the message is a sentence for the user. */
export class LinkRefused extends Error {}

/** Everything reading a link needs: the jail, yt-dlp, the egress rule and the limits. */
export interface LinkReader {
  jail: Jail;
  ytdlp: string;
  /** True only with EGRESS_ALLOW_PRIVATE_HOSTS (tests): local and private addresses may be reached. */
  allowPrivateHosts: boolean;
  /** Resolver for the egress checks (tests); the system's by default. */
  resolve?: (host: string) => Promise<string[]>;
  /** TESTS ONLY, set programmatically: exact `address:port` destinations let through although private. */
  allowForTests?: string[];
  maxBytes: number;
  timeoutSeconds: number;
  /** Time to turn one page's HTML into text (in a worker thread, ended when over). */
  readSeconds: number;
  /** TESTS ONLY, set programmatically: starts that time limit instead of a real timer. */
  readDeadline?: ReadDeadline;
  maxRedirects: number;
  maxChars: number;
  subtitleLanguages: string;
  /** Limits of the documents reader for PDFs and office files. */
  documentLimits: Omit<ReadLimits, 'maxChars'>;
}

/** Readability gives up on pages with more elements than this (their whole text is taken instead). */
const MAX_ELEMENTS = 30_000;
const USER_AGENT = 'Mozilla/5.0 (compatible; wa-assistant-bot link reader)';
const shown = (url: URL) => (url.href.length > 100 ? `${url.href.slice(0, 100)}…` : url.href);

/** The refusal for a local address, the same wherever it is found (typed, resolved, redirected to). */
const localRefusal = (url: URL) => `I did not open ${shown(url)}: it is a local or private network address, and I only read public sites.`;

/**
 * Refuses early, with a clear sentence, what is plainly not a public http(s) address (a literal private address,
 * `localhost`, `.local`, `.internal`). Names are checked where the connection is made: `fetchPublic` and the jail's
 * egress proxy check every DNS answer and every redirect, and connect to the address they checked.
 */
function checkEarly(url: URL, reader: LinkReader): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new LinkRefused(`I only read http and https links, not ${url.protocol.replace(':', '')}: links.`);
  if (url.username || url.password) throw new LinkRefused('I do not open links that carry a user name or password.');
  if (reader.allowPrivateHosts) return;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
  if (reader.allowForTests?.includes(`${host}:${url.port || (url.protocol === 'https:' ? 443 : 80)}`)) return;
  if (host === 'localhost' || /\.(localhost|local|internal)$/.test(host) || (net.isIP(host) && isPrivateAddress(host))) throw new LinkRefused(localRefusal(url));
}

function egressOf(reader: LinkReader): EgressPolicy {
  return { isBlocked: reader.allowPrivateHosts ? () => false : isPrivateAddress, resolve: reader.resolve, allowForTests: reader.allowForTests };
}

/** `text` cut to `max` characters at a paragraph or line end where one is near, with the cut said in words. */
export function cutText(text: string, max: number): { text: string; note?: string } {
  if (text.length <= max) return { text };
  const head = text.slice(0, max);
  const end = Math.max(head.lastIndexOf('\n\n'), head.lastIndexOf('\n'));
  const kept = end > max * 0.8 ? head.slice(0, end) : head;
  return { text: kept.trimEnd(), note: `only its first ${kept.length.toLocaleString('en')} of ${text.length.toLocaleString('en')} characters were read (it is long)` };
}

/** What the documents reader calls the file: the last part of the link's path, when it has one. */
function fileNameOf(url: URL): string | undefined {
  const last = decodeURIComponent(url.pathname.split('/').pop() ?? '').slice(0, 120);
  return last || undefined;
}

/** `10 MB`, `100 KB`. */
const sizeOf = (bytes: number) => (bytes >= 1_000_000 ? `${Math.round(bytes / 100_000) / 10} MB` : `${Math.round(bytes / 1000)} KB`);

/** Why a download stopped, as a sentence about this link. */
function downloadSentence(err: DownloadRefused, url: URL, reader: LinkReader): string {
  const why = err.message;
  const local = /^(.+) is a local or private address$/.exec(why);
  if (local) {
    // The refused address is the link's own, or one a redirect led to.
    const own = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
    return local[1] === own ? localRefusal(url) : `I did not open ${shown(url)}: it redirects to ${local[1]}, a local or private network address, and I only read public sites.`;
  }
  if (/larger than/.test(why)) return `I stopped reading ${shown(url)}: it is larger than the ${sizeOf(reader.maxBytes)} I read.`;
  if (/timed out/.test(why)) return `I stopped reading ${shown(url)}: it took longer than ${reader.timeoutSeconds} s.`;
  if (/too many redirects/.test(why)) return `I did not read ${shown(url)}: it redirects more than ${reader.maxRedirects} times.`;
  if (/does not resolve/.test(why)) return `I could not find the site ${url.hostname} (its name does not resolve). Check the link.`;
  if (/HTTP \d+/.test(why)) return `I could not read ${shown(url)}: the site answered ${/HTTP \d+/.exec(why)![0]}.`;
  return `I could not read ${shown(url)}: ${why}.`;
}

/**
 * Reads one link someone sent: a video (YouTube, Vimeo, Dailymotion) by its subtitles through yt-dlp in the jail; any
 * other link is fetched from the bot's process under the egress rules (no local or private address, each redirect and
 * DNS answer checked, the connection pinned to the address checked; at most `maxBytes` actually received, within
 * `timeoutSeconds`, at most `maxRedirects`), and then a web page becomes its readable text (Readability), a PDF or
 * office file goes through the documents reader in the jail, plain text is taken as it is. Throws LinkRefused with a
 * sentence for the user.
 *
 * @example
 * const read = await readLink(new URL('https://example.com/post'), reader); // { kind: 'page', title, text, … }
 */
export async function readLink(url: URL, reader: LinkReader): Promise<LinkRead> {
  checkEarly(url, reader);
  if (isVideoLink(url)) {
    try {
      const video = await videoTranscript({ jail: reader.jail, ytdlp: reader.ytdlp, egress: egressOf(reader), languages: reader.subtitleLanguages, timeoutSeconds: reader.timeoutSeconds * 3 }, url);
      return { url: url.href, kind: 'video', label: 'video transcript', title: video.title, ...cutText(video.text, reader.maxChars) };
    } catch (err) {
      if (err instanceof TranscriptUnavailable || err instanceof JailRefused) throw new LinkRefused(err.message);
      throw err;
    }
  }
  let fetched: { body: Buffer; contentType: string; url: string };
  try {
    fetched = await fetchPublic(url.href, {
      maxBytes: reader.maxBytes,
      timeoutMs: reader.timeoutSeconds * 1000,
      maxRedirects: reader.maxRedirects,
      policy: egressOf(reader),
      headers: { 'user-agent': USER_AGENT, accept: 'text/html,application/xhtml+xml,application/pdf,text/plain;q=0.9,*/*;q=0.5' },
    });
  } catch (err) {
    if (err instanceof DownloadRefused) throw new LinkRefused(downloadSentence(err, url, reader));
    const code = (err as NodeJS.ErrnoException).code;
    throw new LinkRefused(`I could not reach ${url.hostname}${code ? ` (${code})` : ''}. Try again later.`);
  }
  const finalUrl = new URL(fetched.url);
  const type = fetched.contentType.split(';')[0]!.trim().toLowerCase();
  const head = fetched.body.subarray(0, 512).toString('latin1').trimStart().toLowerCase();
  const sniffedHtml = (!type || type === 'application/octet-stream') && (head.startsWith('<!doctype html') || head.startsWith('<html'));
  if (type === 'text/html' || type === 'application/xhtml+xml' || sniffedHtml) {
    let page;
    try {
      page = await extractPage(decodeHtml(fetched.body, fetched.contentType), finalUrl.href, { maxElements: MAX_ELEMENTS, timeoutMs: reader.readSeconds * 1000, memoryMb: 256 }, reader.readDeadline);
    } catch (err) {
      if (err instanceof PageTooHeavy) throw new LinkRefused(`I gave up reading ${shown(url)}: the page is too large to read in ${err.reason === 'time' ? `${reader.readSeconds} s` : 'the memory I give a page'}.`);
      throw err;
    }
    if (!page.text) throw new LinkRefused(`I opened ${shown(url)} but found no text on the page (it may need JavaScript to show anything).`);
    return { url: finalUrl.href, kind: 'page', label: 'web page', title: page.title || finalUrl.hostname, ...cutText(page.text, reader.maxChars) };
  }
  if (type === 'text/plain' || type === 'text/markdown') {
    const text = decodeHtml(fetched.body, fetched.contentType).trim();
    if (!text) throw new LinkRefused(`${shown(url)} is empty.`);
    return { url: finalUrl.href, kind: 'text', label: 'text file', title: fileNameOf(finalUrl) ?? finalUrl.hostname, ...cutText(text, reader.maxChars) };
  }
  if (/^(image|audio|video)\//.test(type)) {
    const what = type.startsWith('image') ? 'a picture' : type.startsWith('audio') ? 'a sound file' : 'a video file';
    throw new LinkRefused(`${shown(url)} is ${what}, not a page or document I can read. Send ${what.replace(/^a /, 'the ')} itself here instead.`);
  }
  try {
    const doc = await readDocument(reader.jail, fetched.body, { fileName: fileNameOf(finalUrl), mimetype: type }, { ...reader.documentLimits, maxChars: reader.maxChars });
    if (doc.pageImages) throw new LinkRefused(`${shown(url)} is a scanned PDF without text. Send the file here and I will look at its pages.`);
    return { url: finalUrl.href, kind: 'document', label: doc.label, title: fileNameOf(finalUrl) ?? finalUrl.hostname, text: doc.text, ...(doc.note ? { note: doc.note } : {}) };
  } catch (err) {
    if (err instanceof DocumentRefused || err instanceof JailRefused) throw new LinkRefused(err.message);
    throw err;
  }
}
