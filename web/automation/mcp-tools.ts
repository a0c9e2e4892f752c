import type { ApiTokenInfo, OperatorPort } from '../../core/operator.js';
import { ApiError, MAX_API_MEDIA_BYTES, MAX_MESSAGES, MEDIA_SCHEMA, POLL_SCHEMA } from '../../core/operator.js';

/*
 * The bot's tools for an MCP client, bound to one API token: the same scopes and the same actions as the local API
 * (`app.automation.actions`): list chats, read a chat's recent messages, search one chat's messages, send a message.
 * A send to a chat the token's `send:` scopes name goes through the effect guard and the outbox as the API's does;
 * a send elsewhere is held for the owner's 👍 (the guard's hold) — only for a token that may send somewhere at all, so
 * a read-only token stays read-only.
 */

/** One tool as MCP lists it (JSON Schema input). */
export interface McpToolDefinition {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[]; additionalProperties?: boolean };
}

export const MCP_TOOLS: McpToolDefinition[] = [
  {
    name: 'list_chats',
    description: 'The WhatsApp chats this token may see (its read:/send:/prompt: chats, and every chat the bot knows with the chats scope), with what it may do in each.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  },
  {
    name: 'read_messages',
    description: 'The recent messages of one chat (oldest first). Needs read:<chat>.',
    inputSchema: {
      type: 'object',
      properties: { chat: { type: 'string', description: 'a phone number (digits) or a chat id (…@s.whatsapp.net, …@g.us)' }, limit: { type: 'integer', minimum: 1, maximum: MAX_MESSAGES, description: 'how many (default 50)' } },
      required: ['chat'],
      additionalProperties: false,
    },
  },
  {
    name: 'search_messages',
    description: `Messages of one chat whose text contains the words asked (case-insensitive), among its last ${MAX_MESSAGES}. Needs read:<chat>; one chat at a time.`,
    inputSchema: {
      type: 'object',
      properties: { chat: { type: 'string' }, query: { type: 'string', minLength: 1 }, limit: { type: 'integer', minimum: 1, maximum: MAX_MESSAGES, description: 'how many matches at most (default 20, the latest)' } },
      required: ['chat', 'query'],
      additionalProperties: false,
    },
  },
  {
    name: 'send_message',
    description: `Sends a WhatsApp message as the bot: a text, a media file (base64, at most ${MAX_API_MEDIA_BYTES / 1024 / 1024} MB) or a poll — exactly one of text, media, poll. To a chat of the token's send: scopes it goes out (through the owner's effect guard); to any other chat it is held until the owner approves it with 👍.`,
    inputSchema: {
      type: 'object',
      properties: { to: { type: 'string', description: 'a phone number (digits) or a chat id' }, text: { type: 'string', minLength: 1 }, media: MEDIA_SCHEMA, poll: POLL_SCHEMA },
      required: ['to'],
      additionalProperties: false,
    },
  },
];

/** A tool's answer: text content, `isError` for a refusal (its message starts with the API code). */
export interface McpToolResult {
  content: Array<{ type: 'text'; text: string }>;
  isError?: boolean;
  [key: string]: unknown;
}

const ok = (value: unknown): McpToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] });
const refused = (code: string, message: string): McpToolResult => ({ content: [{ type: 'text', text: `${code}: ${message}` }], isError: true });

/**
 * Runs tool `name` with `args` for `token`. Never throws for a refusal: an MCP client reads it as a tool error.
 * @example await runMcpTool(app, token, 'send_message', { to: '447700900123', text: 'hi' })
 */
export async function runMcpTool(app: OperatorPort, token: ApiTokenInfo, name: string, args: Record<string, unknown>): Promise<McpToolResult> {
  const actions = app.automation.actions;
  try {
    switch (name) {
      case 'list_chats':
        return ok(await actions.chats(token));
      case 'read_messages':
        return ok(await actions.messages(token, args.chat, args.limit));
      case 'search_messages': {
        const query = typeof args.query === 'string' ? args.query.trim().toLowerCase() : '';
        if (!query) return refused('API_BAD_REQUEST', '"query" must be a text that is not empty');
        const limit = args.limit === undefined ? 20 : Number(args.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > MAX_MESSAGES) return refused('API_BAD_REQUEST', `limit must be a whole number from 1 to ${MAX_MESSAGES}`);
        const { chat, messages } = await actions.messages(token, args.chat, MAX_MESSAGES);
        return ok({ chat, messages: messages.filter((m) => m.text.toLowerCase().includes(query)).slice(-limit) });
      }
      case 'send_message':
        return await send(app, token, args);
      default:
        return refused('API_NOT_FOUND', `there is no tool ${name}`);
    }
  } catch (err) {
    if (err instanceof ApiError) return refused(err.code, err.message);
    app.log.warn({ err, tool: name, token: token.id }, `MCP tool ${name} failed`);
    return refused('API_UNAVAILABLE', 'the bot could not do that now; try again later');
  }
}

async function send(app: OperatorPort, token: ApiTokenInfo, args: Record<string, unknown>): Promise<McpToolResult> {
  const { to, ...message } = args;
  try {
    return ok(await app.automation.actions.send(token, to, message));
  } catch (err) {
    // Outside the token's send: scopes: held for the owner, for a token that may send somewhere at all.
    if (!(err instanceof ApiError) || err.code !== 'API_SCOPE_REFUSED' || !token.scopes.some((s) => s.action === 'send')) throw err;
  }
  const held = await app.automation.actions.holdForOwner(token, to, message);
  return ok({ ...held, note: "outside this token's send scopes: the owner approves it with 👍 (or .yes) before it is sent" });
}
