import type { Context } from 'koa';

/**
 * A request's body, read up to `limit` bytes and no further: a declared or actual size over it throws `tooLarge()`
 * (and the connection closes after the answer, so the rest of the upload goes nowhere). The one reader of the
 * dashboard's forms, the local API's JSON and the hooks' signed bodies.
 */
export async function readBoundedBody(ctx: Context, limit: number, tooLarge: () => Error): Promise<Buffer> {
  if (Number(ctx.get('content-length') || '0') > limit) {
    ctx.set('Connection', 'close');
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      ctx.set('Connection', 'close');
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
