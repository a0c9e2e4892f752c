import { HttpFake, type FakeBehaviour, type RecordedRequest } from '../../app/testing/http-fake.js';
import { completion, lastUserText } from './openai-gateway.js';

/** An answer of `POST /v1/messages` in the Anthropic format. */
export function message(text: string, model = 'fake-vision-model') {
  return {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 8 },
  };
}

/** Ready-made Anthropic-format failures. */
export const anthropicFailures = {
  rateLimit: (retryAfterSeconds?: number): FakeBehaviour => ({
    status: 429,
    json: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' } },
    headers: retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) },
  }),
  overloaded: { status: 529, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } } as FakeBehaviour,
  badKey: { status: 401, json: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } } as FakeBehaviour,
};

/** The image block and question of a recorded `/v1/messages` request. */
export function imageOf(req: RecordedRequest): { mediaType?: string; data?: Buffer; question?: string } {
  const content = (req.json?.messages?.[0]?.content ?? []) as Array<{ type: string; text?: string; source?: { type: string; media_type: string; data: string } }>;
  const image = content.find((b) => b.type === 'image');
  const text = content.find((b) => b.type === 'text');
  return {
    mediaType: image?.source?.type === 'base64' ? image.source.media_type : undefined,
    data: image?.source?.data ? Buffer.from(image.source.data, 'base64') : undefined,
    question: text?.text,
  };
}

/**
 * A fake gateway that speaks both formats on 127.0.0.1: `POST /v1/messages` (Anthropic, vision) answers
 * "<name> sees: <question>" by default, `POST /v1/chat/completions` (OpenAI) answers "<name>: <last user text>",
 * `GET /` is the health probe. Any other path (such as `/v1/v1/messages`) is a 404.
 *
 * @example
 * const gw = await FakeAnthropicGateway.start('primary');
 * gw.nextMessage(anthropicFailures.rateLimit(60));
 */
export class FakeAnthropicGateway {
  private constructor(readonly http: HttpFake, readonly name: string) {}

  static async start(name: string, answer?: (req: RecordedRequest) => FakeBehaviour): Promise<FakeAnthropicGateway> {
    const http = await HttpFake.start({
      'GET /': { status: 200, text: `${name} ok` },
      'POST /v1/messages': answer ?? ((req) => ({ status: 200, json: message(`${name} sees: ${imageOf(req).question ?? ''}`, req.json?.model) })),
      'POST /v1/chat/completions': (req) => ({ status: 200, json: completion(`${name}: ${lastUserText(req)}`, { model: req.json?.model }) }),
    });
    return new FakeAnthropicGateway(http, name);
  }

  get url(): string {
    return this.http.url;
  }

  /** Queues behaviours for the next `/v1/messages` requests. */
  nextMessage(...behaviours: FakeBehaviour[]): this {
    this.http.next('POST /v1/messages', ...behaviours);
    return this;
  }

  /** Vision requests received. */
  messages(): RecordedRequest[] {
    return this.http.received('POST /v1/messages');
  }

  /** Chat-completion requests received. */
  chats(): RecordedRequest[] {
    return this.http.received('POST /v1/chat/completions');
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
