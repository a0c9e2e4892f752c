/**
 * The JSON schema of `config.json`. The same schema validates at start and in the dashboard.
 * Plugin option sections may carry more fields; a plugin can declare a schema for its own options.
 */
export const accessSchema = {
  description: 'Who may use this: "everyone", "owners", or a list of ids (phone digits or LIDs).',
  oneOf: [
    { type: 'string', enum: ['everyone', 'owners'] },
    { type: 'array', items: { type: 'string', pattern: '^[0-9]{3,30}$' } },
  ],
} as const;

/** How the bot meets one kind of incoming call (config `calls.private`, `calls.groups`). */
function callRule(what: string) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      decline: { type: 'boolean', description: `decline ${what} (false: let it ring; it is never answered)` },
      message: { type: 'string', maxLength: 1000, description: `the message sent after declining ${what} (empty: none)` },
    },
  } as const;
}

/** What the effect guard does with an effect (`Verdict` of core/kernel/guard/policy.ts). */
const verdict = { enum: ['allow', 'hold', 'deny'] } as const;

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    prefix: { type: 'string', minLength: 1, maxLength: 3, pattern: '^\\S+$' },
    botName: { type: 'string', minLength: 1, maxLength: 60 },
    targetUserIds: { type: 'array', items: { type: 'string', pattern: '^[0-9]{3,30}$' }, uniqueItems: true },
    port: { type: 'integer', minimum: 0, maximum: 65535 },
    host: { type: 'string', minLength: 1 },
    owners: { type: 'array', items: { type: 'string', pattern: '^[0-9]{3,30}$' }, uniqueItems: true },
    access: {
      type: 'object',
      additionalProperties: false,
      properties: {
        mode: {
          type: 'string',
          enum: ['everyone', 'pairing', 'owners', 'allowList'],
          description: 'who may talk to the bot privately: everyone; pairing (a stranger gets a code an owner approves); owners only; or owners and the allow list',
        },
        allow: { type: 'array', items: { type: 'string', pattern: '^[0-9]{3,30}$' } },
        block: { type: 'array', items: { type: 'string', pattern: '^[0-9]{3,30}$' } },
      },
    },
    account: {
      type: 'object',
      additionalProperties: false,
      properties: {
        mode: {
          type: 'string',
          enum: ['bot', 'self-chat'],
          description: 'bot: the bot has a number of its own; self-chat: it runs on your own number and answers only in your "Message yourself" chat (and in chats the access rules explicitly open)',
        },
      },
    },
    groups: {
      type: 'object',
      additionalProperties: false,
      properties: {
        commandsWithoutMention: { type: 'boolean' },
        policy: { type: 'string', enum: ['allowlist', 'open'], description: 'allowlist: the bot takes part only in groups an owner opened with .activation; open: in every group it is in' },
      },
    },
    whatsapp: {
      type: 'object',
      additionalProperties: false,
      properties: {
        readReceipts: { type: 'boolean', description: 'blue ticks on the messages the bot takes up (never on blocked, held or unaddressed ones)' },
        presence: { type: 'boolean', description: 'show the bot "online" while it types an answer, and offline again after' },
      },
    },
    calls: {
      type: 'object',
      additionalProperties: false,
      description: 'incoming WhatsApp voice and video calls: never answered; declined with a message, for private chats and groups apart',
      properties: {
        private: callRule('a call from one person'),
        groups: callRule('a group call'),
        tellOwner: { type: 'boolean', description: 'tell the owners about each call the bot declined' },
      },
    },
    takeover: {
      type: 'object',
      additionalProperties: false,
      properties: {
        minutes: { type: 'integer', minimum: 1, maximum: 10080, description: 'the bot stays quiet in a chat this long after the owner wrote there from the phone' },
        autoReplies: {
          type: 'array',
          maxItems: 50,
          items: { type: 'string', minLength: 1, maxLength: 4096 },
          description: "texts the WhatsApp Business app sends by itself as the account (greeting, away message): WhatsApp marks them in no way, so an own message that is exactly one of these (case and spaces aside) does not count as the owner taking the chat over",
        },
      },
    },
    conversation: {
      type: 'object',
      additionalProperties: false,
      properties: {
        debounceMs: { type: 'integer', minimum: 0, maximum: 60000, description: "a sender's messages this close together are answered as one turn (default 1500 on WhatsApp; 0 = every message its own turn)" },
        progressAfterSeconds: { type: 'integer', minimum: 0, maximum: 600, description: 'a turn still running after this many seconds shows one status message, edited as it goes (default 8 on WhatsApp; 0 = never)' },
        ackReactions: { type: 'boolean', description: 'react 👀 to a message the bot takes up, then ✅ when answered or ❌ when it failed (default false)' },
      },
    },
    history: {
      type: 'object',
      additionalProperties: false,
      properties: {
        maxMessages: { type: 'integer', minimum: 2, maximum: 1000, description: "the most messages of a chat's live conversation sent to the model; reaching it folds the oldest half into the chat's summary (or, with summaries off, drops the oldest one)" },
        maxPromptTokens: { type: 'integer', minimum: 500, maximum: 1000000, description: 'the most (estimated) tokens of live conversation in one request; reaching it folds the oldest part into the summary too' },
        summarize: { type: 'boolean', description: 'fold older turns into a running per-chat summary instead of dropping them (default true)' },
        summaryMaxTokens: { type: 'integer', minimum: 100, maximum: 8000, description: "the longest a chat's summary may be, in tokens (default 800)" },
      },
    },
    ai: {
      type: 'object',
      additionalProperties: false,
      properties: {
        requestsPerMinute: { type: 'integer', minimum: 0, description: 'AI requests per user per minute (0 = no limit)' },
        tokensPerDay: { type: 'integer', minimum: 0, description: 'tokens per user per day (0 = no limit)' },
        premiumTokensPerDay: { type: 'integer', minimum: 0, description: 'premium-model tokens per user per day (0 = no limit)' },
        quotaMainTokens: { type: 'integer', minimum: 0, description: 'account quota of the main model, warned at 80%' },
        quotaPremiumTokens: { type: 'integer', minimum: 0, description: 'account quota of the premium model, warned at 80%' },
        maxToolRounds: { type: 'integer', minimum: 1, maximum: 20 },
        maxToolCallsPerRound: { type: 'integer', minimum: 1, maximum: 100, description: 'tool calls run per model round; the rest are refused in their results' },
        maxToolCallsPerMessage: { type: 'integer', minimum: 1, maximum: 500, description: 'tool calls run per message over all rounds; then the model answers without tools' },
        maxMemoryWritesPerMessage: { type: 'integer', minimum: 0, maximum: 50, description: 'facts one message may store with the remember tool' },
        toolCallsPerDay: { type: 'integer', minimum: 0, description: 'tool calls per user per day, paid searches included (0 = no limit; owners exempt)' },
        showProvider: { type: 'boolean', description: 'debug: append which provider answered' },
        maxAnswerChars: { type: 'integer', minimum: 500, maximum: 65_536, description: "longest answer of the model sent, in characters (default 16000, four messages); a longer one is cut at a paragraph or word and says so" },
        outageNoticeMinutes: { type: 'integer', minimum: 1, maximum: 1440, description: 'tell the owners when every chat provider has been failing this many minutes' },
        cacheControl: { type: 'boolean', description: 'mark the stable start of each prompt with Anthropic-style cache_control (for gateways that pass it to Claude models; default false)' },
      },
    },
    money: {
      type: 'object',
      additionalProperties: false,
      description: 'Prices per model and monthly caps in money (docs/owners/profiles-and-money.md)',
      properties: {
        currency: { type: 'string', minLength: 1, maxLength: 8, description: 'the currency of prices and caps (default USD; the default prices are USD list prices)' },
        prices: {
          type: 'object',
          description: 'price per million tokens per model; well-known models have defaults, any other is counted at "unknown price"',
          additionalProperties: {
            type: 'object',
            additionalProperties: false,
            required: ['input', 'output'],
            properties: {
              input: { type: 'number', minimum: 0, description: 'per million input tokens' },
              cachedInput: { type: 'number', minimum: 0, description: 'per million cached input tokens (default: the input price)' },
              output: { type: 'number', minimum: 0, description: 'per million output tokens' },
            },
          },
        },
        caps: {
          type: 'object',
          additionalProperties: false,
          properties: {
            personMonthly: { type: 'number', minimum: 0, description: 'money one person may spend per month (0 = no cap; owners exempt)' },
            chatMonthly: { type: 'number', minimum: 0, description: "money one chat may spend per month unless its profile sets its own (0 = no cap)" },
            overallMonthly: { type: 'number', minimum: 0, description: 'money the whole bot may spend per month (0 = no cap)' },
          },
        },
        noticePercent: { type: 'integer', minimum: 1, maximum: 100, description: 'owners are told when a cap is this far used (default 80)' },
      },
    },
    media: {
      type: 'object',
      additionalProperties: false,
      description: 'Media from chats',
      properties: {
        maxDownloadMB: {
          type: 'object',
          additionalProperties: false,
          description: 'largest media downloaded from a chat, per kind, in MB (1 MB = 1024 KB); counted in the bytes actually received, never taken from the size the sender claims',
          properties: Object.fromEntries(
            (['voice', 'audio', 'image', 'video', 'document', 'sticker'] as const).map((kind) => [kind, { type: 'number', exclusiveMinimum: 0, maximum: 2048, description: `largest ${kind} downloaded (MB)` }]),
          ),
        },
      },
    },
    data: {
      type: 'object',
      additionalProperties: false,
      properties: {
        flushIntervalMs: { type: 'integer', minimum: 10, maximum: 60000, description: 'counters (usage, budgets) are written at most once per this interval and at stop; a crash loses at most this much' },
        diskLowMb: { type: 'integer', minimum: 0, description: 'owners are told when the free space of DATA_DIR falls below this many MB (0 = never)' },
      },
    },
    sending: {
      type: 'object',
      additionalProperties: false,
      description: 'Pace of messages the bot starts on its own (notices, reminders, results sent later); replies are not paced',
      properties: {
        perChatPerMinute: { type: 'integer', minimum: 1, maximum: 60, description: 'bot-initiated messages per chat per minute, evenly spaced' },
        globalPerMinute: { type: 'integer', minimum: 1, maximum: 600, description: 'bot-initiated messages per minute over all chats' },
        jitterMs: { type: 'integer', minimum: 0, maximum: 60000, description: 'random extra wait of up to this many ms before each' },
      },
    },
    notices: {
      type: 'object',
      additionalProperties: false,
      description: 'Owner notices (incidents told to the owners in their private chats)',
      properties: {
        minIntervalMinutes: { type: 'integer', minimum: 0, maximum: 1440, description: 'minimum minutes between two notices of one incident key' },
        maxPerHour: { type: 'integer', minimum: 1, maximum: 100, description: 'incident notices per hour over all keys' },
      },
    },
    guard: {
      type: 'object',
      additionalProperties: false,
      description: 'The effect guard: allow, hold for the owner (👍/👎, .yes/.no) or deny every action that leaves its chat or changes the world',
      properties: {
        holdMinutes: { type: 'integer', minimum: 1, maximum: 10080, description: 'how long a held action waits for the owner before it lapses, doing nothing' },
        owner: {
          type: 'object',
          additionalProperties: false,
          description: "an owner's effects: here (their own chats) and elsewhere (reaching another chat)",
          properties: { here: verdict, elsewhere: verdict },
        },
        others: {
          type: 'object',
          additionalProperties: false,
          description: "anyone else's effects",
          properties: { here: verdict, elsewhere: verdict },
        },
        kinds: {
          type: 'object',
          additionalProperties: false,
          description: 'per kind of effect, a stricter verdict (e.g. "deleteFiles": "hold")',
          properties: Object.fromEntries(['message', 'publish', 'deleteFiles', 'schedule', 'mcpTool', 'sendFile'].map((k) => [k, verdict])),
        },
      },
    },
    hooks: {
      type: 'object',
      description: 'Inbound webhooks (POST /hooks/<name>): each signed with HOOK_SECRET_<NAME> from .env, turned into a message or a prompt in its chat',
      propertyNames: { pattern: '^[a-z0-9][a-z0-9-]{0,39}$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['chat', 'template'],
        properties: {
          chat: { type: 'string', minLength: 1, maxLength: 200, description: 'the chat it reaches: a phone number (digits) or a chat id (a group id ends in @g.us)' },
          template: { type: 'string', minLength: 1, maxLength: 4000, description: 'the text sent, with {{field}} replaced by the JSON payload\'s field (dotted for nested: {{a.b}})' },
          mode: { enum: ['message', 'prompt'], description: 'message: the text is sent as it is; prompt: the bot answers it in that chat' },
        },
      },
    },
    webhooks: {
      type: 'object',
      description: 'Outbound event webhooks: each URL gets the events it names, signed with WEBHOOK_SECRET_<NAME> from .env',
      propertyNames: { pattern: '^[a-z0-9][a-z0-9-]{0,39}$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['url', 'events'],
        properties: {
          url: { type: 'string', pattern: '^https?://', maxLength: 2000, description: 'where the events are POSTed (http or https; public addresses only)' },
          events: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['message.received', 'message.answered', 'link.changed', 'approval.requested'] }, description: 'which events it gets' },
        },
      },
    },
    shutdown: {
      type: 'object',
      additionalProperties: false,
      properties: {
        graceSeconds: { type: 'integer', minimum: 0, maximum: 600, description: 'on SIGTERM/SIGINT, how long messages being handled may take to finish' },
      },
    },
    pluginPackages: { type: 'array', items: { type: 'string', minLength: 1 } },
    plugins: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        properties: { enabled: { type: 'boolean' }, access: accessSchema },
      },
    },
  },
} as const;

/** Who the bot answers in private chats (see core/access). */
export type AccessMode = 'everyone' | 'pairing' | 'owners' | 'allowList';

/** Whose number the bot is linked as: its own (`bot`), or the owner's own, answering in "Message yourself" (`self-chat`). */
export type AccountMode = 'bot' | 'self-chat';

/** Who may use a plugin. */
export type Access = 'everyone' | 'owners' | string[];

export interface PluginSection {
  enabled?: boolean;
  access?: Access;
  [option: string]: unknown;
}

/** The parsed `config.json`, with defaults filled in. */
/** One kind of incoming call: declined or not, and the message sent after declining (empty: none). */
export interface CallRule {
  decline: boolean;
  message: string;
}

export interface BotConfig {
  prefix: string;
  botName: string;
  targetUserIds: string[];
  port: number;
  host: string;
  owners: string[];
  access: { mode: AccessMode; allow: string[]; block: string[] };
  /** Whose number the bot runs on: `bot` (its own) or `self-chat` (the owner's: see docs/owners/self-chat.md). */
  account: { mode: AccountMode };
  groups: { commandsWithoutMention: boolean; policy: 'allowlist' | 'open' };
  takeover: { minutes: number; autoReplies: string[] };
  /** Incoming calls (WhatsApp): declined or left ringing, never answered; the message after declining; owners told. */
  calls: { private: CallRule; groups: CallRule; tellOwner: boolean };
  /** WhatsApp behaviour towards the people who write: read receipts and "online" while typing. */
  whatsapp: { readReceipts: boolean; presence: boolean };
  /**
   * `debounceMs` unset: the transport's default (1500 ms on WhatsApp and a console in a terminal, else 0).
   * `progressAfterSeconds` unset: the transport's default (8 s on WhatsApp and a console in a terminal, else 0).
   */
  conversation: { debounceMs?: number; progressAfterSeconds?: number; ackReactions: boolean };
  history: { maxMessages: number; maxPromptTokens: number; summarize: boolean; summaryMaxTokens: number };
  ai: AiConfig;
  /** Prices per model (per million tokens) and monthly caps in money (0: no cap). */
  money: MoneyConfig;
  /** Largest media downloaded from a chat, per kind, in MB (bytes actually received). */
  media: { maxDownloadMB: Record<'voice' | 'audio' | 'image' | 'video' | 'document' | 'sticker', number> };
  data: { flushIntervalMs: number; diskLowMb: number };
  sending: { perChatPerMinute: number; globalPerMinute: number; jitterMs: number };
  notices: { minIntervalMinutes: number; maxPerHour: number };
  /** The effect guard's policy (core/kernel/guard/policy.ts); parts left out take their defaults there. */
  guard?: GuardConfig;
  shutdown: { graceSeconds: number };
  /** Inbound webhooks by name (`POST /hooks/<name>`); the secrets are in .env (`HOOK_SECRET_<NAME>`). */
  hooks?: Record<string, HookConfig>;
  /** Outbound event webhooks by name; the secrets are in .env (`WEBHOOK_SECRET_<NAME>`). */
  webhooks?: Record<string, WebhookConfig>;
  pluginPackages: string[];
  plugins: Record<string, PluginSection>;
  /**
   * Top-level keys that plugins own (`configSection` of definePlugin, e.g. `timeZone`), as written in the file;
   * each plugin reads its own validated, with its default, through `host.section()`.
   */
  sections: Record<string, unknown>;
}

export interface MoneyConfig {
  currency: string;
  prices: Record<string, { input: number; cachedInput?: number; output: number }>;
  caps: { personMonthly: number; chatMonthly: number; overallMonthly: number };
  noticePercent: number;
}

export type GuardVerdict = 'allow' | 'hold' | 'deny';
export interface GuardConfig {
  holdMinutes?: number;
  owner?: { here?: GuardVerdict; elsewhere?: GuardVerdict };
  others?: { here?: GuardVerdict; elsewhere?: GuardVerdict };
  kinds?: Partial<Record<'message' | 'publish' | 'deleteFiles' | 'schedule' | 'mcpTool' | 'sendFile', GuardVerdict>>;
}

export interface AiConfig {
  requestsPerMinute: number;
  tokensPerDay: number;
  premiumTokensPerDay: number;
  quotaMainTokens: number;
  quotaPremiumTokens: number;
  maxToolRounds: number;
  /** Tool calls run per model round (the rest get a refusal as their result). */
  maxToolCallsPerRound: number;
  /** Tool calls run per message over all its rounds; then the model answers without tools. */
  maxToolCallsPerMessage: number;
  /** Facts one message may store with the `remember` tool. */
  maxMemoryWritesPerMessage: number;
  /** Tool calls one user may run per day (0 = no limit; owners are exempt). */
  toolCallsPerDay: number;
  showProvider: boolean;
  /** The longest model answer sent (characters); a longer one is cut where a paragraph or word ends, saying so. */
  maxAnswerChars: number;
  /** Owners are told when every chat leg has been failing this long (minutes). */
  outageNoticeMinutes: number;
  /** Mark the prompt's stable start with `cache_control: {type: "ephemeral"}` (Anthropic-style caching on request). */
  cacheControl: boolean;
}

/** One inbound webhook (config.json `hooks.<name>`). */
export interface HookConfig {
  chat: string;
  template: string;
  mode?: 'message' | 'prompt';
}

/** The events an outbound webhook can get. */
export type BotEventName = 'message.received' | 'message.answered' | 'link.changed' | 'approval.requested';

/** One outbound event webhook (config.json `webhooks.<name>`). */
export interface WebhookConfig {
  url: string;
  events: BotEventName[];
}
