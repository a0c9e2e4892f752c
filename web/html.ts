/**
 * Tiny HTML helpers for server-rendered pages. Everything interpolated through `html` is escaped unless it is a
 * `SafeHtml` produced by `html` itself (so nested templates compose without double escaping).
 */

/** A piece of markup that is already safe to insert. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/**
 * Escapes text for HTML element content and double- or single-quoted attribute values.
 * @example escapeHtml('<b>"x"</b>') // '&lt;b&gt;&quot;x&quot;&lt;/b&gt;'
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

type Part = SafeHtml | string | number | boolean | null | undefined | Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof SafeHtml) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

/**
 * Tagged template that escapes every interpolated value (arrays are joined; null/undefined/false render nothing).
 * @example html`<p>${userText}</p>` // SafeHtml with userText escaped
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/**
 * Marks trusted markup (generated SVG, constant strings) as safe. Never pass user input.
 * @example raw(qrSvg)
 */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
