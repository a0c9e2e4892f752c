/** A value, or a promise of it: what a handler, a reader or `setup` may return. */
export type Awaitable<T> = T | Promise<T>;
