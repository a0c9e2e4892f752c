/**
 * A chat-completion request's JSON text, made from parts serialized once.
 *
 * Each message sends the chat's whole prompt: the system prompt, up to `history.maxMessages` history turns and the
 * tools' schemas — almost all of them the same parts as in the message before. `JSON.stringify` of the whole body
 * walked every one of them again (~35 µs a message in the console bench, the history's texts scattered in memory);
 * here a part frozen with `frozenPart` is serialized once, and a request joins the texts once (~11 µs).
 *
 * Only frozen parts are reused, deep-frozen by `frozenPart` itself: a part that could still change is never sent with
 * an old text.
 *
 * @example
 * const turn = frozenPart({ role: 'user', content: 'Hi' });
 * requestJson({ model: 'm', messages: [systemMessage, turn] }); // '{"model":"m","messages":[…,{"role":"user","content":"Hi"}]}'
 */

/**
 * A frozen part's JSON text, kept on the part itself under a symbol (JSON.stringify and Object.keys skip it): reading
 * a property costs less than a lookup by identity, and the text goes when the part goes.
 */
const PART_JSON = Symbol('request part JSON');

type Part = { readonly [PART_JSON]?: string };

/**
 * Makes `value`'s JSON text once, for every request that sends it, and deep-freezes `value` (its own objects and
 * arrays too). Give it only objects you built for requests (a prompt turn, a tool's shape): whoever holds them can no
 * longer change them (a change throws in strict-mode code).
 */
export function frozenPart<T extends object>(value: T): T {
  if (isFrozenPart(value)) return value;
  const json = JSON.stringify(value);
  // On the object before it is frozen (a frozen object takes no new property); nothing changes it in between.
  Object.defineProperty(value, PART_JSON, { value: json });
  deepFreeze(value);
  return value;
}

/** Whether `value` was made a request part by `frozenPart` (its JSON text is then reused). */
export function isFrozenPart(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as Part)[PART_JSON] !== undefined;
}

/**
 * The JSON text of a request body, the same as `JSON.stringify(body)`: own enumerable keys in order, `undefined` and
 * function values left out. The `messages` array is joined from its items' texts, and a part made by `frozenPart` (a
 * prompt turn, the tools list) is not serialized again.
 */
export function requestJson(body: object): string {
  // One list of pieces joined once: the text is copied once, however many parts it has.
  const pieces: string[] = ['{'];
  for (const key of Object.keys(body)) {
    const value = (body as Record<string, unknown>)[key];
    if (key === 'messages' && Array.isArray(value) && !isFrozenPart(value)) {
      pieces.push(pieces.length > 1 ? ',' : '', JSON.stringify(key), ':[');
      // As in JSON.stringify: an item with no JSON (undefined, a function) is null in an array.
      for (let i = 0; i < value.length; i++) pieces.push(i ? ',' : '', partJson(value[i]) ?? 'null');
      pieces.push(']');
      continue;
    }
    const json = partJson(value);
    if (json !== undefined) pieces.push(pieces.length > 1 ? ',' : '', JSON.stringify(key), ':', json);
  }
  pieces.push('}');
  return pieces.join('');
}

function partJson(value: unknown): string | undefined {
  return (typeof value === 'object' && value !== null && (value as Part)[PART_JSON]) || JSON.stringify(value);
}

function deepFreeze(value: object): void {
  // No cycle gets here: frozenPart made the JSON text first, and JSON.stringify rejects a cycle. A part made before is
  // deep-frozen already.
  if (isFrozenPart(value) && Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const key of Object.keys(value)) {
    const inner = (value as Record<string, unknown>)[key];
    if (typeof inner === 'object' && inner !== null) deepFreeze(inner);
  }
}
