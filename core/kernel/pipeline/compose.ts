/** A Koa-style middleware: does its work, and calls `next()` to hand the message on. */
export type Middleware<C> = (ctx: C, next: () => Promise<void>) => Promise<void> | void;

/**
 * Composes middleware into one, run in order. Like koa-compose, calling `next()` twice in one middleware is an
 * error (it would run the rest of the chain twice).
 *
 * @example
 * const run = compose([async (ctx, next) => { ctx.seen = true; await next(); }, handler]);
 * await run(ctx);
 */
export function compose<C>(stack: Middleware<C>[]): (ctx: C, last?: () => Promise<void>) => Promise<void> {
  for (const fn of stack) {
    if (typeof fn !== 'function') throw new TypeError('compose: every middleware must be a function');
  }
  return function run(ctx: C, last?: () => Promise<void>): Promise<void> {
    let index = -1;
    const dispatch = (i: number): Promise<void> => {
      if (i <= index) return Promise.reject(new Error('next() called multiple times in one middleware'));
      index = i;
      const fn = i === stack.length ? last : stack[i];
      if (!fn) return Promise.resolve();
      try {
        return Promise.resolve((fn as Middleware<C>)(ctx, () => dispatch(i + 1)));
      } catch (err) {
        return Promise.reject(err);
      }
    };
    return dispatch(0);
  };
}
