import { HttpFake, type FakeBehaviour, type RecordedRequest } from '../../app/testing/http-fake.js';

/** A chat-completion answer in the OpenAI format. */
export function completion(content: string | null, extra: { model?: string; toolCalls?: Array<{ id: string; name: string; arguments: string }>; usage?: { prompt_tokens: number; completion_tokens: number } } = {}) {
  const usage = extra.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: extra.model ?? 'fake-model',
    choices: [
      {
        index: 0,
        finish_reason: extra.toolCalls ? 'tool_calls' : 'stop',
        message: {
          role: 'assistant',
          content,
          ...(extra.toolCalls ? { tool_calls: extra.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
        },
      },
    ],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/** Ready-made failure answers the chain must fail over on. */
export const failures = {
  insufficientQuota: { status: 429, json: { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } } },
  rateLimit: (retryAfterSeconds?: number): FakeBehaviour => ({
    status: 429,
    json: { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } },
    headers: retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) },
  }),
  serverError: { status: 500, json: { error: { message: 'internal error org-SECRETORG123', type: 'server_error' } } },
  badKey: { status: 401, json: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } },
  unknownModel: { status: 404, json: { error: { message: 'The model `no-such-model` does not exist or you do not have access to it.', type: 'invalid_request_error', code: 'model_not_found' } } },
  contextTooLong: { status: 400, json: { error: { message: "This model's maximum context length is 8192 tokens", type: 'invalid_request_error', code: 'context_length_exceeded' } } },
} satisfies Record<string, FakeBehaviour | ((...a: any[]) => FakeBehaviour)>;

/**
 * A fake OpenAI-compatible gateway on 127.0.0.1: `GET /` answers 200 (health), `POST /v1/chat/completions` answers
 * "<name>: <last user text>" by default. Queue other behaviours with `next()`. With `options.models`, `GET /v1/models`
 * lists them (OpenAI format; only to `options.modelsKey` when set, 401 to any other key); without, it answers 404 as
 * many gateways do.
 *
 * @example
 * const gw = await FakeGateway.start('primary');
 * gw.next(failures.rateLimit(30));
 */
export class FakeGateway {
  private constructor(readonly http: HttpFake, readonly name: string) {}

  static async start(name: string, answer?: (req: RecordedRequest) => FakeBehaviour, options: { models?: string[]; modelsKey?: string } = {}): Promise<FakeGateway> {
    const list = { status: 200, json: { object: 'list', data: (options.models ?? []).map((id) => ({ id, object: 'model', owned_by: name })) } };
    // With modelsKey, the list answers that key only (401 otherwise), as real gateways do.
    const models: FakeBehaviour = options.modelsKey ? (req) => (req.headers.authorization === `Bearer ${options.modelsKey}` ? list : failures.badKey) : list;
    const http = await HttpFake.start({
      'GET /': { status: 200, text: `${name} ok` },
      'POST /v1/chat/completions': answer ?? ((req) => ({ status: 200, json: completion(`${name}: ${lastUserText(req)}`, { model: req.json?.model }) })),
      ...(options.models ? { 'GET /v1/models': models } : {}),
    });
    // The bot's start probe gets a plain answer (not the test's answer function, whose side effects tests count).
    http.probeAnswers.set('POST /v1/chat/completions', (req) => ({ status: 200, json: completion('OK', { model: req.json?.model }) }));
    return new FakeGateway(http, name);
  }

  get url(): string {
    return this.http.url;
  }

  /** Queues behaviours for the next chat-completion requests. */
  next(...behaviours: FakeBehaviour[]): this {
    this.http.next('POST /v1/chat/completions', ...behaviours);
    return this;
  }

  /** The bot's start probe requests (header `x-wa-bot-probe`), kept apart from `chats()`. */
  probes(): RecordedRequest[] {
    return this.http.probes;
  }

  /** Resolves with the bot's first start probe once it reached this gateway (the probe goes out after ready). */
  probed(): Promise<RecordedRequest> {
    return this.http.until(() => this.http.probes[0]);
  }

  /** How the start probe is answered from now on (e.g. `failures.badKey`). */
  answerProbe(behaviour: FakeBehaviour): this {
    this.http.probeAnswers.set('POST /v1/chat/completions', behaviour);
    return this;
  }

  /** Chat-completion requests received. */
  chats(): RecordedRequest[] {
    return this.http.received('POST /v1/chat/completions');
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/** The text of the last user message in a chat-completion request. */
export function lastUserText(req: RecordedRequest): string {
  const messages = (req.json?.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
}
