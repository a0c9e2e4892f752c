import type { DataSchema } from '../../services/store/schemas.js';

/** How the bot takes part in a group an owner opened (`.activation`). */
export type Activation = 'mention' | 'always' | 'off';

/** A message held while its sender waits for an owner's approval (text only: the bytes of media are not kept). */
export interface HeldMessage {
  id: string;
  text: string;
  at: number;
  media?: string;
}

/** A stranger's pairing request: the code they were given and what they sent meanwhile. */
export interface PairingRequest {
  code: string;
  /** The stranger's ids (phone jid, LID when known). */
  sender: string;
  senderAltId?: string;
  senderName?: string;
  chatId: string;
  at: number;
  /** Set by `.deny`: kept until it expires so the sender does not get a new code at once. */
  denied?: boolean;
  held: HeldMessage[];
}

/** Who decided something, and when (owner's id; `dashboard` for the dashboard). */
interface Stamp {
  by: string;
  at: number;
}

/** The access document: everything the owners decided in chats or on the dashboard about who and how. */
export interface AccessDocument {
  /** Senders an owner approved (user part of the id: digits). */
  approved: Array<{ id: string; name?: string } & Stamp>;
  pending: PairingRequest[];
  /** Group chat id → how the bot takes part there. */
  groups: Record<string, { mode: Activation } & Stamp>;
  /** Chat id → that chat's own instructions. */
  personas: Record<string, { text: string } & Stamp>;
  /** Chat id → paused until (unix ms; null: until `.bot on`). */
  paused: Record<string, { until: number | null } & Stamp>;
}

const str = { type: 'string' } as const;
const num = { type: 'number' } as const;
const stamp = { by: str, at: num };

export const ACCESS_SCHEMA: DataSchema = {
  name: 'access',
  version: 1,
  schema: {
    type: 'object',
    required: ['approved', 'pending', 'groups', 'personas', 'paused'],
    properties: {
      approved: { type: 'array', items: { type: 'object', required: ['id', 'by', 'at'], properties: { id: str, name: str, ...stamp } } },
      pending: {
        type: 'array',
        items: {
          type: 'object',
          required: ['code', 'sender', 'chatId', 'at', 'held'],
          properties: {
            code: str,
            sender: str,
            senderAltId: str,
            senderName: str,
            chatId: str,
            at: num,
            denied: { type: 'boolean' },
            held: { type: 'array', items: { type: 'object', required: ['id', 'text', 'at'], properties: { id: str, text: str, at: num, media: str } } },
          },
        },
      },
      groups: { type: 'object', additionalProperties: { type: 'object', required: ['mode', 'by', 'at'], properties: { mode: { enum: ['mention', 'always', 'off'] }, ...stamp } } },
      personas: { type: 'object', additionalProperties: { type: 'object', required: ['text', 'by', 'at'], properties: { text: str, ...stamp } } },
      paused: { type: 'object', additionalProperties: { type: 'object', required: ['until', 'by', 'at'], properties: { until: { type: ['number', 'null'] }, ...stamp } } },
    },
  },
};

export const emptyAccess = (): AccessDocument => ({ approved: [], pending: [], groups: {}, personas: {}, paused: {} });

/** The access document kept (checked on load; a bad one is set aside and the bot starts closed-empty). */
export interface AccessDocumentStore {
  get(): Promise<AccessDocument>;
  update(change: (doc: AccessDocument) => AccessDocument | void): Promise<AccessDocument>;
  /** Resolves once every change is in the store database; rejects when one cannot be written (it is retried). */
  flush(): Promise<void>;
}
