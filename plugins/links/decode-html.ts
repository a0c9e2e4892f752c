/*
 * Kept apart from html-text.ts, which loads a DOM (linkedom, Readability: over a hundred modules) and runs only in the
 * page worker: decoding a page's bytes in the plugin adds nothing of that to start-up.
 */

/**
 * The page's text: a page's bytes are in the charset its header names, else the one its `<meta charset>` names, else
 * UTF-8 (an unknown name falls back to UTF-8 rather than failing).
 */
export function decodeHtml(bytes: Buffer, contentType: string): string {
  const declared = /charset=["']?([\w.:-]+)/i.exec(contentType)?.[1] ?? /<meta[^>]+charset=["']?([\w.:-]+)/i.exec(bytes.subarray(0, 4096).toString('latin1'))?.[1];
  try {
    return new TextDecoder(declared ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}
