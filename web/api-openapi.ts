import { DEFAULT_MESSAGES, MAX_API_MEDIA_BYTES, MAX_MESSAGES, MEDIA_SCHEMA, POLL_SCHEMA, projectVersion, SCOPE_GRAMMAR } from '../core/operator.js';

/*
 * The OpenAPI 3.1 description of the local API, served at `GET /api/openapi.json` (written by hand: five routes; a
 * test checks that every route served is described here).
 */

const mediaMb = MAX_API_MEDIA_BYTES / 1024 / 1024;

const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });

const chatParameter = 'a phone number (digits, an optional +) or a chat id (<digits>@s.whatsapp.net, <id>@g.us, <digits>@lid)';

const delivery = {
  '200': { description: 'Sent (through the guard, the recipient rule and the outbox).', content: { 'application/json': { schema: { $ref: '#/components/schemas/Sent' } } } },
  '202': { description: "Held for the owner's 👍 (config.json guard policy); sent if they approve before it lapses.", content: { 'application/json': { schema: { $ref: '#/components/schemas/Held' } } } },
};

const refusals = {
  '400': error('API_BAD_REQUEST: the body or the chat is not what the API takes.'),
  '401': error('API_TOKEN_MISSING or API_TOKEN_INVALID: no token, or one that is unknown or revoked.'),
  '403': error('API_SCOPE_REFUSED (outside the token\'s scopes), API_RECIPIENT_REFUSED (the bot may not write first to that chat) or API_GUARD_DENIED (the guard policy refuses).'),
};

/** The API's OpenAPI 3.1 document. */
export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'WhatsApp assistant bot: local API',
      version: projectVersion(),
      description: `Reach WhatsApp through the bot with a scoped token (npm run token -- create, or the dashboard). Send it as "Authorization: Bearer <token>". ${SCOPE_GRAMMAR}.`,
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths: {
      '/api/openapi.json': {
        get: { summary: 'This description', security: [], responses: { '200': { description: 'The OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } } } },
      },
      '/api/v1/messages': {
        post: {
          summary: 'Send a text, a media file or a poll to a chat (scope send:<chat>)',
          description: `Exactly one of text, media, poll. Media comes as base64 in the body (at most ${mediaMb} MB decoded); an image's, video's or audio's type is read from its bytes. A poll has 2 to 12 different options.`,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  oneOf: [
                    { type: 'object', required: ['to', 'text'], properties: { to: { type: 'string', description: chatParameter }, text: { type: 'string', minLength: 1 } } },
                    { type: 'object', required: ['to', 'media'], properties: { to: { type: 'string', description: chatParameter }, media: { $ref: '#/components/schemas/Media' } } },
                    { type: 'object', required: ['to', 'poll'], properties: { to: { type: 'string', description: chatParameter }, poll: { $ref: '#/components/schemas/Poll' } } },
                  ],
                },
              },
            },
          },
          responses: {
            ...delivery,
            ...refusals,
            '400': error('API_BAD_REQUEST (the body or the chat is not what the API takes: none or several of text, media, poll), API_BAD_MEDIA (not base64, a kind or type the bytes are not, a bad file name or caption) or API_BAD_POLL (a question or options outside WhatsApp\'s bounds).'),
            '413': error(`API_BODY_TOO_LARGE: a file over ${mediaMb} MB, or a body without media over 64 KB.`),
            '503': error('API_UNAVAILABLE: the bot is stopping.'),
          },
        },
      },
      '/api/v1/chats': {
        get: {
          summary: 'The chats the token may see (every chat the bot knows with scope chats; else those its scopes name)',
          responses: {
            '200': {
              description: 'The chats, each with what the token may do there.',
              content: { 'application/json': { schema: { type: 'object', required: ['chats'], properties: { chats: { type: 'array', items: { $ref: '#/components/schemas/Chat' } } } } } },
            },
            '401': refusals['401'],
          },
        },
      },
      '/api/v1/chats/{chat}/messages': {
        get: {
          summary: "A chat's recent messages, oldest first (scope read:<chat>)",
          parameters: [
            { name: 'chat', in: 'path', required: true, description: chatParameter, schema: { type: 'string' } },
            { name: 'limit', in: 'query', required: false, description: `how many of the last messages (default ${DEFAULT_MESSAGES})`, schema: { type: 'integer', minimum: 1, maximum: MAX_MESSAGES } },
          ],
          responses: {
            '200': {
              description: 'The messages the bot keeps of the chat.',
              content: { 'application/json': { schema: { type: 'object', required: ['chat', 'messages'], properties: { chat: { type: 'string' }, messages: { type: 'array', items: { $ref: '#/components/schemas/Message' } } } } } },
            },
            ...refusals,
          },
        },
      },
      '/api/v1/prompts': {
        post: {
          summary: "Run a prompt in a chat as the owner's turn; the answer is delivered there (scope prompt:<chat>)",
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { type: 'object', required: ['to', 'prompt'], properties: { to: { type: 'string', description: chatParameter }, prompt: { type: 'string', minLength: 1 } } } } },
          },
          responses: {
            ...delivery,
            '200': {
              description: 'The answer was sent (status sent, with the answer), or the model chose to say nothing (status silent).',
              content: { 'application/json': { schema: { oneOf: [{ $ref: '#/components/schemas/Sent' }, { type: 'object', required: ['status', 'to'], properties: { status: { const: 'silent' }, to: { type: 'string' } } }] } } },
            },
            ...refusals,
            '409': error('API_PROMPT_REFUSED: the turn may not run now (the chat is paused, the group is off, no owners in config.json, over budget).'),
            '413': error('API_BODY_TOO_LARGE: the body is larger than 64 KB.'),
            '502': error('API_UPSTREAM_FAILED: no AI provider answered.'),
            '503': error('API_UNAVAILABLE: WhatsApp is not linked right now, or the bot is stopping.'),
          },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'wabot_<id>_<secret>' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string', description: 'see docs/reference/errors.md' }, message: { type: 'string' } } } },
        },
        Sent: { type: 'object', required: ['status', 'to', 'id'], properties: { status: { const: 'sent' }, to: { type: 'string' }, id: { type: 'string', description: 'the sent message (the last one when a long text went as several)' }, answer: { type: 'string' } } },
        Media: MEDIA_SCHEMA,
        Poll: POLL_SCHEMA,
        Held: { type: 'object', required: ['status', 'to', 'holdId', 'expiresAt'], properties: { status: { const: 'held' }, to: { type: 'string' }, holdId: { type: 'string' }, expiresAt: { type: 'string', format: 'date-time' } } },
        Chat: {
          type: 'object',
          required: ['id', 'kind', 'may'],
          properties: { id: { type: 'string' }, kind: { enum: ['group', 'private'] }, may: { type: 'array', items: { enum: ['send', 'read', 'prompt'] } } },
        },
        Message: {
          type: 'object',
          required: ['from', 'fromBot', 'text', 'at'],
          properties: { id: { type: 'string' }, from: { type: 'string', description: 'the sender id, or bot' }, fromBot: { type: 'boolean' }, name: { type: 'string' }, text: { type: 'string' }, at: { type: 'string', format: 'date-time' }, media: { type: 'string' } },
        },
      },
    },
  };
}
