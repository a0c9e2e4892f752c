/** A model's price in the config's currency per million tokens: input, cached input (what a prompt cache served), output. */
export interface Price {
  input: number;
  cachedInput?: number;
  output: number;
}

/**
 * List prices (USD per million tokens) of well-known models, used when `money.prices` in config.json does not name
 * the model. Gateways resell at their own prices: an owner who pays otherwise sets `money.prices`.
 */
export const DEFAULT_PRICES: Readonly<Record<string, Price>> = Object.freeze({
  'gpt-4o': { input: 2.5, cachedInput: 1.25, output: 10 },
  'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 },
  'gpt-4.1': { input: 2, cachedInput: 0.5, output: 8 },
  'gpt-4.1-mini': { input: 0.4, cachedInput: 0.1, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, cachedInput: 0.025, output: 0.4 },
  'o4-mini': { input: 1.1, cachedInput: 0.275, output: 4.4 },
  'o3-mini': { input: 1.1, cachedInput: 0.55, output: 4.4 },
  'claude-3-5-haiku': { input: 0.8, cachedInput: 0.08, output: 4 },
  'claude-3-5-sonnet': { input: 3, cachedInput: 0.3, output: 15 },
  'claude-3-7-sonnet': { input: 3, cachedInput: 0.3, output: 15 },
  'claude-sonnet-4': { input: 3, cachedInput: 0.3, output: 15 },
  'claude-opus-4': { input: 15, cachedInput: 1.5, output: 75 },
  'gemini-2.0-flash': { input: 0.1, cachedInput: 0.025, output: 0.4 },
  'gemini-2.5-flash': { input: 0.3, cachedInput: 0.075, output: 2.5 },
  'gemini-2.5-pro': { input: 1.25, cachedInput: 0.31, output: 10 },
  'llama-3.3-70b-versatile': { input: 0.59, output: 0.79 },
  'llama-3.1-8b-instant': { input: 0.05, output: 0.08 },
  'deepseek-chat': { input: 0.27, cachedInput: 0.07, output: 1.1 },
});

/** A dated or `-latest` release of a listed model (`gpt-4o-mini-2024-07-18`, `claude-3-5-sonnet-20241022`) is priced as it. */
const RELEASE_SUFFIX = /^-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$/;

/**
 * The price of `model`: the owner's table first, then the defaults; a gateway's `vendor/` prefix and a release suffix
 * are looked through. Undefined when neither knows it (then the cost is "unknown", never guessed).
 */
export function priceOf(model: string, own: Readonly<Record<string, Price>>): Price | undefined {
  // Every answer prices its requests: each table (config.json's, a new object at each reload) keeps what it found.
  let found = pricesFound.get(own);
  if (!found) pricesFound.set(own, (found = new Map()));
  let price = found.get(model);
  if (price === undefined) {
    price = lookUpPrice(model, own) ?? null;
    if (found.size < PRICES_FOUND_MAX) found.set(model, price);
  }
  return price ?? undefined;
}

/** The price each owner's table gave a model (null: none known), per table object. */
const pricesFound = new WeakMap<object, Map<string, Price | null>>();
/** Models remembered per table at most (model names come from the gateways, not from users). */
const PRICES_FOUND_MAX = 1000;

function lookUpPrice(model: string, own: Readonly<Record<string, Price>>): Price | undefined {
  const bare = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  for (const table of [own, DEFAULT_PRICES]) {
    const exact = table[model] ?? table[bare];
    if (exact) return exact;
    for (const [name, price] of Object.entries(table)) if (bare.startsWith(name) && RELEASE_SUFFIX.test(bare.slice(name.length))) return price;
  }
  return undefined;
}

/** The cost of one request's tokens at `price` (cached input at its own price; at the input price when none is set). */
export function costOf(tokens: { prompt: number; cached: number; completion: number }, price: Price): number {
  const cached = Math.min(tokens.cached, tokens.prompt);
  return ((tokens.prompt - cached) * price.input + cached * (price.cachedInput ?? price.input) + tokens.completion * price.output) / 1_000_000;
}

/** A price's weight for comparing two models (input plus output per million tokens). */
export const priceWeight = (price: Price) => price.input + price.output;

/** An amount of money for people: `$0.0123` (USD) or `0.0123 EUR`; four decimals under one unit, two above. */
export function money(amount: number, currency: string): string {
  const digits = Math.abs(amount) < 1 ? 4 : 2;
  const text = amount.toFixed(digits);
  return currency === 'USD' ? `$${text}` : `${text} ${currency}`;
}

/** The calendar month (UTC) of `at` as YYYY-MM: spending and caps count per month. */
export function monthOf(at: number): string {
  // Each turn asks (twice) for the month of now: the last month found is kept with its bounds.
  if (at >= lastMonth.start && at < lastMonth.end) return lastMonth.text;
  const d = new Date(at);
  const text = d.toISOString().slice(0, 7);
  lastMonth = { start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1), text };
  return text;
}

let lastMonth = { start: 0, end: 0, text: '' };
