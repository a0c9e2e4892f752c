/** Encoded forms shorter than this are not redacted on their own: they would blank out ordinary words. */
const MIN_FORM_CHARS = 8;

/**
 * The forms a secret takes in a text that carries it escaped or encoded, besides as written: JSON-escaped (`\"`,
 * `\\`, `\/`, and every non-ASCII character as `\uXXXX`, as a server echoing it in JSON writes it), URL-encoded
 * (`%XX`, `+` for a space), and base64 / base64url — whole, and the part that depends on the secret alone when it is
 * encoded inside a longer value (`Basic base64(user:secret)`), at each of the three byte alignments; and each of these
 * JSON-escaped once more (a JSON echo inside a JSON log line). Longest first.
 *
 * @example secretForms('tok"en/1') // ['dG9rImVuLzE=', 'tok\\"en\\/1', 'tok%22en%2F1', 'tok\\"en/1', 'tok"en/1', …]
 */
export function secretForms(secret: string): string[] {
  if (!secret) return [];
  const forms = new Set<string>([secret]);
  const json = JSON.stringify(secret).slice(1, -1);
  forms.add(json);
  forms.add(json.replace(/\//g, '\\/'));
  forms.add(json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  const url = encodeURIComponent(secret);
  forms.add(url);
  forms.add(url.replace(/%20/g, '+'));
  forms.add(url.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()));
  const bytes = Buffer.from(secret, 'utf8');
  for (const b64 of [bytes.toString('base64'), bytes.toString('base64url')]) {
    forms.add(b64);
    forms.add(b64.replace(/=+$/, ''));
  }
  for (const alignment of [0, 1, 2]) {
    const shifted = Buffer.concat([Buffer.alloc(alignment), bytes]);
    const whole = Math.floor(shifted.length / 3) * 4;
    // The first group mixes in the bytes before the secret, the last partial one the bytes after it.
    const middle = shifted.toString('base64').slice(alignment ? 4 : 0, whole);
    forms.add(middle);
    forms.add(middle.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  // Any of them inside a JSON text (a log line, a tool's JSON answer) is escaped once more.
  for (const form of [...forms]) forms.add(JSON.stringify(form).slice(1, -1));
  return [...forms].filter((form) => form === secret || form.length >= MIN_FORM_CHARS).sort((a, b) => b.length - a.length);
}

/** Every secret of `secrets` in all its forms (see `secretForms`), longest first, for redacting texts. */
export function withSecretForms(secrets: readonly string[]): string[] {
  return [...new Set(secrets.flatMap(secretForms))].sort((a, b) => b.length - a.length);
}
