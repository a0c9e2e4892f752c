import { BadAnswerError, UpstreamFailure } from '../../api/errors.js';
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { openaiSdk } from './openai-sdk.js';
import { boundedFetch, MAX_PROVIDER_ANSWER_BYTES } from '../http/bounded-fetch.js';
import type { ProviderLeg } from './types.js';

/** An image as the messages endpoint takes it: JPEG, PNG, GIF or WebP bytes of its declared type. */
export interface VisionImage {
  mediaType: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';
  data: Buffer;
}

/** One question about one image (or a few: the pages of a scanned document, in order). */
export interface VisionRequest {
  image: VisionImage;
  /** Further images asked about together with `image` (pages 2, 3… of a scan). */
  moreImages?: VisionImage[];
  question: string;
  system: string;
  premium: boolean;
  maxTokens: number;
  timeoutMs: number;
  /** `anthropic-version` header; default DEFAULT_ANTHROPIC_VERSION. */
  anthropicVersion?: string;
}

export interface VisionAnswer {
  text: string;
  leg: string;
  model: string;
  /** OpenAI-style counts (an Anthropic answer's cache reads and writes are input too; cache reads are its cached part). */
  usage?: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
}

/** The messages-API version sent by default: the one every Anthropic-format gateway accepts. */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

/**
 * One Anthropic client per leg, built on first use. The SDK appends `/v1/messages` itself, so it gets the leg's
 * root URL (never the `/v1` base, which would give `/v1/v1/messages`). SDK retries are off: the chain decides.
 * The SDK (1.x) sends the key only as `Authorization: Bearer` and a very recent `anthropic-version`; gateways that
 * speak the Anthropic format expect `x-api-key` and a version they know, so both are set explicitly too.
 */
const clients = new Map<string, Anthropic>();
/** The SDK is loaded on the first image, not at start: most messages never need it. */
let sdk: Promise<typeof import('@anthropic-ai/sdk')> | undefined;
async function clientFor(leg: ProviderLeg, timeoutMs: number, version: string): Promise<Anthropic> {
  const { default: AnthropicClient } = await (sdk ??= import('@anthropic-ai/sdk'));
  const key = `${leg.name}\u0000${leg.rootUrl}\u0000${leg.apiKey}\u0000${timeoutMs}\u0000${version}`;
  let client = clients.get(key);
  if (!client) {
    client = new AnthropicClient({
      apiKey: leg.apiKey,
      baseURL: leg.rootUrl,
      maxRetries: 0,
      timeout: timeoutMs,
      fetch: boundedFetch(MAX_PROVIDER_ANSWER_BYTES, `the answer of ${leg.name}`),
      defaultHeaders: { 'x-api-key': leg.apiKey, 'anthropic-version': version },
    });
    clients.set(key, client);
  }
  return client;
}

/** True for legs that can serve this request: gateways, and for a premium request those with a premium model. */
export function visionLegFilter(premium: boolean): (leg: ProviderLeg) => boolean {
  return (leg) => leg.kind === 'gateway' && (!premium || Boolean(leg.premiumModel));
}

/** Which endpoint answered images on a leg: Anthropic `/v1/messages`, or OpenAI-style `/v1/chat/completions`. */
export type VisionPath = 'messages' | 'chat';

/**
 * The path that last worked per leg. A leg that answered 404/405 on `/v1/messages` is asked through chat completions
 * from then on, without a wasted call; no entry is "not yet verified". Keyed by the leg itself, not by its name and
 * address: an app's provider chain makes its legs once at start and keeps them for its life, so what one app learnt
 * is never read by another in the same process (two bots, or a test's gateway on the port a closed one had).
 */
const visionPaths = new WeakMap<ProviderLeg, VisionPath>();

/** The path that last worked on a leg, or undefined when no image went through it yet. */
export function visionPathOf(leg: ProviderLeg): VisionPath | undefined {
  return visionPaths.get(leg);
}

/**
 * The Anthropic SDK's class of an error (walking up its class chain: RateLimitError → APIError). By name, not
 * `instanceof`: the SDK is loaded on first use only (it costs ~200 ms and ~10 MB at start).
 */
function anthropicErrorName(err: unknown): string | undefined {
  let proto = err && typeof err === 'object' ? Object.getPrototypeOf(err) : undefined;
  for (let depth = 0; proto && depth < 6; depth++, proto = Object.getPrototypeOf(proto)) {
    const name = (proto.constructor as { name?: string } | undefined)?.name;
    if (name === 'APIConnectionTimeoutError' || name === 'APIConnectionError' || name === 'APIError') return name;
  }
  return undefined;
}

/** This plugin's error classifier: the Anthropic SDK's errors in the provider chain's terms, others unchanged. */
export function asUpstreamFailure(err: unknown): unknown {
  const name = anthropicErrorName(err);
  if (name === 'APIConnectionTimeoutError') return new UpstreamFailure('timeout');
  if (name === 'APIConnectionError') return new UpstreamFailure('network', { code: (err as { cause?: { code?: string } }).cause?.code });
  const shaped = err as { status?: unknown; headers?: unknown; error?: unknown; message?: string };
  if (name === 'APIError' && typeof shaped.status === 'number') return new UpstreamFailure('http', { status: shaped.status, headers: shaped.headers, body: shaped.error, message: shaped.message });
  return err;
}

/** True when the error says the leg has no `/v1/messages` (an OpenAI-only gateway), rather than that it failed. */
export function lacksMessagesEndpoint(err: unknown): boolean {
  const status = (err as { status?: unknown })?.status;
  if (status === 404 || status === 405 || status === 501) return true;
  const text = String((err as Error)?.message ?? '');
  return status === 400 && /unsupported|not supported|unknown (url|endpoint|route)|no route/i.test(text);
}

const chatClients = new Map<string, OpenAI>();
async function chatClientFor(leg: ProviderLeg, timeoutMs: number): Promise<OpenAI> {
  const key = `${leg.name}\u0000${leg.baseUrl}\u0000${leg.apiKey}\u0000${timeoutMs}`;
  let client = chatClients.get(key);
  if (!client) {
    const { default: OpenAI } = await openaiSdk();
    client = new OpenAI({ apiKey: leg.apiKey, baseURL: leg.baseUrl, maxRetries: 0, timeout: timeoutMs, fetch: boundedFetch(MAX_PROVIDER_ANSWER_BYTES, `the answer of ${leg.name}`) });
    chatClients.set(key, client);
  }
  return client;
}

const imagesOf = (request: VisionRequest): VisionImage[] => [request.image, ...(request.moreImages ?? [])];

/** Anthropic's prompt-cache mark (five minutes; a read costs a tenth of the input price). */
const EPHEMERAL = { type: 'ephemeral' as const };

async function viaMessages(leg: ProviderLeg, model: string, request: VisionRequest): Promise<VisionAnswer> {
  const client = await clientFor(leg, request.timeoutMs, request.anthropicVersion ?? DEFAULT_ANTHROPIC_VERSION);
  const images = imagesOf(request);
  const answer = await client.messages.create({
    model,
    max_tokens: request.maxTokens,
    // Cache breakpoints on the stable prefix: the system text (the same for every image of the chat), then the
    // images (a follow-up question about the same photos reads them from the cache). Only the question varies.
    // A prefix under the model's minimum is simply not cached: the marks cost nothing then.
    system: [{ type: 'text', text: request.system, cache_control: EPHEMERAL }],
    messages: [
      {
        role: 'user',
        content: [
          ...images.map((image, i) => ({
            type: 'image' as const,
            source: { type: 'base64' as const, media_type: image.mediaType, data: image.data.toString('base64') },
            ...(i === images.length - 1 ? { cache_control: EPHEMERAL } : {}),
          })),
          { type: 'text', text: request.question },
        ],
      },
    ],
  });
  const blocks = Array.isArray(answer?.content) ? answer.content : [];
  const text = blocks
    .filter((b): b is Anthropic.TextBlock => b?.type === 'text' && typeof (b as Anthropic.TextBlock).text === 'string')
    .map((b) => b.text)
    .join('\n')
    .trim();
  // An empty answer is the leg's failure: the next leg gets the image.
  if (!text) throw new BadAnswerError('vision answer without text');
  const u = answer?.usage;
  const cached = u?.cache_read_input_tokens ?? 0;
  const usage = u ? { prompt_tokens: (u.input_tokens ?? 0) + cached + (u.cache_creation_input_tokens ?? 0), completion_tokens: u.output_tokens ?? 0, prompt_tokens_details: { cached_tokens: cached } } : undefined;
  return { text, leg: leg.name, model, usage };
}

/** The same question as OpenAI-style image content (a data URL) on the leg's chat completions. */
async function viaChat(leg: ProviderLeg, model: string, request: VisionRequest): Promise<VisionAnswer> {
  const completion = await (await chatClientFor(leg, request.timeoutMs)).chat.completions.create({
    model,
    max_tokens: request.maxTokens,
    messages: [
      { role: 'system', content: request.system },
      {
        role: 'user',
        content: [
          ...imagesOf(request).map((image) => ({ type: 'image_url' as const, image_url: { url: `data:${image.mediaType};base64,${image.data.toString('base64')}` } })),
          { type: 'text', text: request.question },
        ],
      },
    ],
  });
  const content = completion?.choices?.[0]?.message?.content;
  const text = typeof content === 'string' ? content.trim() : '';
  if (!text) throw new BadAnswerError('vision answer without text');
  const usage = completion.usage ? { prompt_tokens: completion.usage.prompt_tokens ?? 0, completion_tokens: completion.usage.completion_tokens ?? 0, prompt_tokens_details: { cached_tokens: completion.usage.prompt_tokens_details?.cached_tokens ?? 0 } } : undefined;
  return { text, leg: leg.name, model, usage };
}

/**
 * Asks about an image over the gateway legs in chain order, with the chain's failover and cooldowns. Each leg is
 * asked through `POST /v1/messages` (Anthropic format, image as a base64 block); a leg without that endpoint
 * (404/405/unsupported) is asked through its `POST /v1/chat/completions` with OpenAI-style image content, and the
 * path that worked is remembered for that leg.
 *
 * @example
 * const { text } = await askVision(ctx.ai, { image, question: 'what is this?', system, premium: false, maxTokens: 1024, timeoutMs: 45000 });
 */
/** What askVision needs of the AI service (`host.ai`, `ctx.ai`): the chain's failover over its legs. */
export interface VisionFailover {
  failover<T>(purpose: string, call: (leg: ProviderLeg) => Promise<T>, filter?: (leg: ProviderLeg) => boolean, userId?: string): Promise<T>;
}

export async function askVision(ai: VisionFailover, request: VisionRequest): Promise<VisionAnswer> {
  return ai.failover(
    request.premium ? 'premium vision' : 'vision',
    async (leg) => {
      const model = request.premium ? leg.premiumModel : leg.model;
      if (visionPathOf(leg) === 'chat') return viaChat(leg, model, request);
      let answer: VisionAnswer;
      try {
        answer = await viaMessages(leg, model, request);
      } catch (err) {
        if (!lacksMessagesEndpoint(err)) throw asUpstreamFailure(err);
        answer = await viaChat(leg, model, request);
        visionPaths.set(leg, 'chat');
        return answer;
      }
      visionPaths.set(leg, 'messages');
      return answer;
    },
    visionLegFilter(request.premium),
  );
}
