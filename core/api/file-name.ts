/**
 * A file name for an id that can never escape its folder: keeps letters, digits, `@`, `.`, `_`, `-`, encodes the
 * rest, and never yields `.`/`..` or an empty name.
 *
 * @example safeFileName('123@g.us') // '123@g.us'
 * @example safeFileName('../etc/passwd') // '%2E.%2Fetc%2Fpasswd'
 */
export function safeFileName(id: string): string {
  const hex = (c: string) => '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0');
  const encoded = id.replace(/[^A-Za-z0-9@._-]/g, hex).replace(/^\./, hex);
  return (encoded || '%00').slice(0, 200);
}
