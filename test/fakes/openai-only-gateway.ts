import type { RecordedRequest } from '../../app/testing/http-fake.js';
import { completion, FakeGateway } from './openai-gateway.js';

/** The image and question of an OpenAI-style chat request (`image_url` data URL + text part), if any. */
export function chatImageOf(req: RecordedRequest): { mediaType?: string; data?: Buffer; question?: string; system?: string } {
  const messages = (req.json?.messages ?? []) as Array<{ role: string; content: unknown }>;
  const user = messages.find((m) => m.role === 'user');
  const parts = Array.isArray(user?.content) ? (user.content as Array<{ type: string; text?: string; image_url?: { url: string } }>) : [];
  const url = parts.find((p) => p.type === 'image_url')?.image_url?.url ?? '';
  const match = /^data:([^;]+);base64,(.*)$/s.exec(url);
  const system = messages.find((m) => m.role === 'system')?.content;
  return {
    mediaType: match?.[1],
    data: match ? Buffer.from(match[2], 'base64') : undefined,
    question: parts.find((p) => p.type === 'text')?.text,
    system: typeof system === 'string' ? system : undefined,
  };
}

/**
 * An OpenAI-only gateway on 127.0.0.1: `POST /v1/messages` does not exist (404, as such gateways answer), and
 * `POST /v1/chat/completions` answers an image question with "<name> sees via chat: <question>" (other requests as
 * the plain fake gateway does).
 */
export function startOpenAiOnlyGateway(name: string): Promise<FakeGateway> {
  return FakeGateway.start(name, (req) => {
    const image = chatImageOf(req);
    if (image.data) return { status: 200, json: completion(`${name} sees via chat: ${image.question ?? ''}`, { model: req.json?.model }) };
    const messages = (req.json?.messages ?? []) as Array<{ role: string; content: unknown }>;
    const last = [...messages].reverse().find((m) => m.role === 'user');
    return { status: 200, json: completion(`${name}: ${typeof last?.content === 'string' ? last.content : ''}`, { model: req.json?.model }) };
  });
}
