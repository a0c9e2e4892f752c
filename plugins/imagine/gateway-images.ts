import { UpstreamFailure, type ProviderLeg } from '../../core/index.js';
import { DownloadRefused, readJsonUpTo, type EgressPolicy } from '../../core/media.js';
import { fetchPublic } from '../../core/builtin.js';

/** Room in an image answer besides the picture's base64 (JSON keys, a revised prompt, usage). */
const ANSWER_OVERHEAD_BYTES = 256 * 1024;
/** An error answer is a few lines of JSON. */
const ERROR_ANSWER_BYTES = 64 * 1024;

/** The gateway has no image endpoint (it answered 404, 405 or 501 to `/v1/images/generations`). */
export class NoImageEndpoint extends Error {
  constructor(readonly leg: string, readonly status: number) {
    super(`gateway ${leg} has no image endpoint (HTTP ${status})`);
  }
}

/** The gateway answered, but not with a picture the bot can send. */
export class BadImageAnswer extends Error {}

/** What a picture's first bytes say it is; undefined for anything else (never trusted from a header or a name). */
export function pictureType(bytes: Buffer): { mimetype: string; ext: string } | undefined {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return { mimetype: 'image/png', ext: 'png' };
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { mimetype: 'image/jpeg', ext: 'jpg' };
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return { mimetype: 'image/webp', ext: 'webp' };
  return undefined;
}

export interface ImageRequest {
  model: string;
  prompt: string;
  size: string;
  timeoutMs: number;
  maxBytes: number;
  /** The egress rules a returned URL is fetched under. */
  egress: EgressPolicy;
}

/**
 * One `POST <leg>/v1/images/generations` (OpenAI format) on one gateway leg; the picture comes back as `b64_json` or
 * as a URL, which is fetched under the egress check (every DNS answer and redirect checked, size capped).
 *
 * @example
 * const { bytes } = await generateOnLeg(leg, { model: 'gpt-image-1', prompt: 'a red fox', size: '1024x1024', … });
 */
export async function generateOnLeg(leg: ProviderLeg, request: ImageRequest): Promise<{ bytes: Buffer; mimetype: string; ext: string }> {
  let response: Response;
  try {
    response = await fetch(`${leg.baseUrl}/images/generations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${leg.apiKey}` },
      body: JSON.stringify({ model: request.model, prompt: request.prompt, n: 1, size: request.size }),
      signal: AbortSignal.timeout(request.timeoutMs),
    });
  } catch (err) {
    const name = (err as Error)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') throw new UpstreamFailure('timeout');
    throw new UpstreamFailure('network', { code: (err as { cause?: { code?: string } })?.cause?.code ?? 'connection failed' });
  }
  if ([404, 405, 501].includes(response.status)) {
    await response.body?.cancel().catch(() => undefined);
    throw new NoImageEndpoint(leg.name, response.status);
  }
  if (!response.ok) {
    const body = await readJsonUpTo(response, ERROR_ANSWER_BYTES, 'the error answer').catch(() => undefined);
    throw new UpstreamFailure('http', { status: response.status, headers: Object.fromEntries(response.headers), body });
  }
  // Read up to what a picture of maxBytes takes as base64 in JSON, and no further: a larger answer is cut off as it
  // arrives, never held whole.
  let answer: { data?: Array<{ b64_json?: unknown; url?: unknown }> } | undefined;
  try {
    answer = (await readJsonUpTo(response, Math.ceil((request.maxBytes * 4) / 3) + ANSWER_OVERHEAD_BYTES, 'the answer')) as typeof answer;
  } catch (err) {
    if (err instanceof DownloadRefused) throw new BadImageAnswer(`the gateway's ${err.message.replace(/^the /, '')}`);
    const name = (err as Error)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') throw new UpstreamFailure('timeout');
    throw new UpstreamFailure('network', { code: (err as { cause?: { code?: string } })?.cause?.code ?? 'connection broken' });
  }
  const first = answer?.data?.[0];
  let bytes: Buffer;
  if (typeof first?.b64_json === 'string' && first.b64_json) bytes = Buffer.from(first.b64_json, 'base64');
  else if (typeof first?.url === 'string' && first.url) {
    bytes = (await fetchPublic(first.url, { maxBytes: request.maxBytes, timeoutMs: request.timeoutMs, policy: request.egress })).body;
  } else throw new BadImageAnswer('the gateway answered without b64_json or url');
  if (bytes.length > request.maxBytes) throw new BadImageAnswer(`the picture is larger than ${request.maxBytes} bytes`);
  const type = pictureType(bytes);
  if (!type) throw new BadImageAnswer('the gateway answered with something that is not a PNG, JPEG or WebP picture');
  return { bytes, ...type };
}
