import type Anthropic from '@anthropic-ai/sdk';
import { BadAnswerError } from '../../core/providers/failure.js';
import type { AiService, ProviderLeg } from '../../core/providers/types.js';
import type { PreparedImage } from './prepare-image.js';

/** One question about one image. */
export interface VisionRequest {
  image: PreparedImage;
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
  usage?: { prompt_tokens: number; completion_tokens: number };
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

/**
 * Asks about an image through `POST /v1/messages` (Anthropic format, image as a base64 block with its media
 * type), over the gateway legs in chain order with the chain's failover and cooldowns.
 *
 * @example
 * const { text } = await askVision(ctx.ai, { image, question: 'what is this?', system, premium: false, maxTokens: 1024, timeoutMs: 45000 });
 */
export async function askVision(ai: AiService, request: VisionRequest): Promise<VisionAnswer> {
  return ai.failover(
    request.premium ? 'premium vision' : 'vision',
    async (leg) => {
      const model = request.premium ? leg.premiumModel : leg.model;
      const client = await clientFor(leg, request.timeoutMs, request.anthropicVersion ?? DEFAULT_ANTHROPIC_VERSION);
      const answer = await client.messages.create({
        model,
        max_tokens: request.maxTokens,
        system: request.system,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: request.image.mediaType, data: request.image.data.toString('base64') } },
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
      const usage = answer?.usage ? { prompt_tokens: answer.usage.input_tokens ?? 0, completion_tokens: answer.usage.output_tokens ?? 0 } : undefined;
      return { text, leg: leg.name, model, usage };
    },
    visionLegFilter(request.premium),
  );
}
