import type { Context } from 'koa';
import { formatBytes } from '../format.js';
import { readBoundedBody } from '../bounded-body.js';

/** Largest form body the dashboard accepts (the whole config with plugin options fits easily). */
export const MAX_FORM_BYTES = 256 * 1024;

/** A request body the dashboard refuses, with the HTTP status and a message for people. */
export class BodyError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/**
 * Reads an `application/x-www-form-urlencoded` body with a size limit. Throws BodyError: 415 for another
 * content type, 413 when larger than `limit`, 400 when it is not valid UTF-8.
 *
 * @example const form = await readForm(ctx); form.get('_csrf')
 */
export async function readForm(ctx: Context, limit = MAX_FORM_BYTES): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw new BodyError(415, 'Send the form as application/x-www-form-urlencoded.');
  const body = await readBoundedBody(ctx, limit, () => new BodyError(413, `The form is too large (limit ${formatBytes(limit)}).`));
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new BodyError(400, 'The form is not valid UTF-8.');
  }
  return new URLSearchParams(text);
}
