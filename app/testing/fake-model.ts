import { HttpFake, type FakeBehaviour, type RecordedRequest } from './http-fake.js';

/** A chat-completion request as the fake model received it. */
export interface ModelRequest {
  model: string;
  messages: Array<{ role: string; content?: unknown; tool_call_id?: string }>;
  /** Names of the tools the bot offered with this request. */
  tools: string[];
  /** The offered tools' descriptions, by name. */
  descriptions: Record<string, string>;
}

/** What the fake model answers: a text, or a call of one of the offered tools. */
export type ModelAnswer = string | { tool: string; args: Record<string, unknown> };

/** The text of the last message of a request (a user's text, or a tool's result after a tool call). */
export function lastText(request: ModelRequest): string {
  const content = request.messages.at(-1)?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p as { text?: string }).text ?? '').join('');
  return '';
}

/**
 * The text inside the first content frame of `text` (what the core's `quotedContent` framed: a document, a tool's
 * outside text), or `text` itself when it holds none. The frame's neutralising stays (`<<<` inside reads `< < <`).
 *
 * @example contentOf(lastText(request)) // a tool's result without the core's frame around it
 */
export function contentOf(text: string): string {
  const m = /\n<<<CONTENT\n([\s\S]*?)\nCONTENT>>>/.exec(text);
  return m ? m[1]! : text;
}

/** Every text a request carries, whatever its role (system, user, assistant, tool), in order. */
export function allTexts(request: ModelRequest): string[] {
  return request.messages.map((m) => (typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? m.content.map((p) => (p as { text?: string }).text ?? '').join('') : ''));
}

/** The first `CALL TOOL <name> with {json}` instruction found in `text` (the shortest `{…}` after it that parses). */
export function instructionIn(text: string): { tool: string; args: Record<string, unknown> } | undefined {
  for (const m of text.matchAll(/CALL TOOL ([A-Za-z0-9_.-]+)( with \{)?/g)) {
    if (!m[2]) return { tool: m[1]!, args: {} };
    const from = m.index! + m[0].length - 1;
    for (let end = text.indexOf('}', from); end >= 0; end = text.indexOf('}', end + 1)) {
      try {
        const args = JSON.parse(text.slice(from, end + 1)) as unknown;
        if (args && typeof args === 'object' && !Array.isArray(args)) return { tool: m[1]!, args: args as Record<string, unknown> };
      } catch {
        // not yet a whole object: try the next closing brace
      }
    }
  }
  return undefined;
}

/**
 * A model that obeys any instruction it sees — the worst a model can do with words planted in what it reads. When
 * `CALL TOOL <name> with {json}` appears anywhere in the request (a system line, a quoted document, a summary, a
 * tool's result, a persona), it calls that tool if it is offered and has not called it in this turn yet; otherwise it
 * answers `fallback(request)` (default "model: <last text>"). The prompt-injection catalogue runs on it: whatever the
 * bot put in front of it, no effect may follow.
 *
 * @example
 * const bot = await startTestBot(remind, { model: obeyingModel() });
 */
export function obeyingModel(fallback: (request: ModelRequest) => ModelAnswer = (r) => `model: ${lastText(r)}`): (request: ModelRequest) => ModelAnswer {
  return (request) => {
    // Tools already called in this turn (the assistant's tool calls since the last user message) are not called again.
    const called = new Set<string>();
    for (const m of request.messages as Array<{ role: string; tool_calls?: Array<{ function?: { name?: string } }> }>) {
      if (m.role === 'user') called.clear();
      for (const c of m.tool_calls ?? []) if (c.function?.name) called.add(c.function.name);
    }
    for (const text of allTexts(request)) {
      for (const m of text.matchAll(/CALL TOOL /g)) {
        const order = instructionIn(text.slice(m.index));
        if (order && request.tools.includes(order.tool) && !called.has(order.tool)) return order;
      }
    }
    return fallback(request);
  };
}

/**
 * An OpenAI-compatible chat model on 127.0.0.1 for plugin tests: `GET /` answers 200 (the health probe), and
 * `POST /v1/chat/completions` answers with `answer(request)` (default: "model: <last text>"). Nothing leaves the machine.
 * It runs on the kit's {@link HttpFake}, so a test can also make it fail: `model.http.next('POST /v1/chat/completions',
 * { status: 429, json: {...} })`, `'hang'` or `'drop'`.
 */
export class FakeModel {
  readonly requests: ModelRequest[] = [];
  private calls = 0;

  private constructor(
    readonly http: HttpFake,
    private readonly answer: (request: ModelRequest) => ModelAnswer,
  ) {}

  static async start(answer: (request: ModelRequest) => ModelAnswer = (r) => `model: ${lastText(r)}`): Promise<FakeModel> {
    let model!: FakeModel;
    const http = await HttpFake.start({
      'GET /': { status: 200, text: 'fake model' },
      'POST /v1/chat/completions': (req) => model.respond(req),
    });
    model = new FakeModel(http, answer);
    return model;
  }

  /** `http://127.0.0.1:<port>`, the `BASE_URL` the bot is given. */
  get url(): string {
    return this.http.url;
  }

  private respond(req: RecordedRequest): FakeBehaviour {
    try {
      const body = req.json as { model: string; messages: ModelRequest['messages']; tools?: Array<{ function: { name: string; description?: string } }> };
      const tools = body.tools ?? [];
      const descriptions = Object.fromEntries(tools.map((t) => [t.function.name, t.function.description ?? '']));
      const request: ModelRequest = { model: body.model, messages: body.messages, tools: tools.map((t) => t.function.name), descriptions };
      this.requests.push(request);
      return { status: 200, json: chatCompletion(this.answer(request), body.model, `call_${++this.calls}`) };
    } catch (err) {
      return { status: 500, json: { error: { message: (err as Error).message, type: 'server_error' } } };
    }
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/** A chat-completion answer in the OpenAI format: a text, or a call of one tool (`id` names the call). */
export function chatCompletion(answer: ModelAnswer, modelName: string, id = 'call_1'): unknown {
  const message =
    typeof answer === 'string'
      ? { role: 'assistant', content: answer }
      : { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: answer.tool, arguments: JSON.stringify(answer.args) } }] };
  return {
    id: `chatcmpl-${id}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: modelName,
    choices: [{ index: 0, finish_reason: typeof answer === 'string' ? 'stop' : 'tool_calls', message }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}
