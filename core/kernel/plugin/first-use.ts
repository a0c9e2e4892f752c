/**
 * What a plugin makes at the first message, command or tool call that needs it (its handlers' modules, loaded with
 * `import()`), not at start: `make` runs once, at the first call, and every call shares its result. A failed `make` is
 * that call's error (the handler's, said in the reply and the log) and the next call tries again.
 *
 * @example
 * const handlers = atFirstUse(async () => (await import('./commands.js')).makeHandlers(host));
 * run: async (ctx) => (await handlers()).run(ctx),
 */
export function atFirstUse<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    if (!made) {
      const attempt = make();
      made = attempt;
      attempt.catch(() => made === attempt && (made = undefined));
    }
    return made;
  };
}
