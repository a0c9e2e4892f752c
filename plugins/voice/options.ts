import type { PluginSection } from '../../core/config/schema.js';
import { DEFAULT_REACTIONS, type ReactionOptions } from './reactions.js';

/** The voice plugin's options in config.json (`plugins.voice`), with defaults filled in. */
export interface VoiceOptions {
  /** The audio provider's upload limit in MB (Groq: 25 on the free tier); larger files are shrunk or split. */
  maxUploadMb: number;
  /** Longest voice note or audio file sent for transcription (minutes; longer ones are not uploaded at all). */
  maxMinutes: number;
  /** Audio minutes one user may have transcribed per UTC day (owners are exempt). */
  dailyMinutesPerUser: number;
  reactions: ReactionOptions;
  /** Answering voice notes with voice notes (off unless the owner turns it on; `.voice on|off` per chat wins). */
  replies: VoiceReplyOptions;
}

export interface VoiceReplyOptions {
  enabled: boolean;
  /** Longer answers go as text: a long voice note is harder to follow than to read. */
  maxChars: number;
}

export const DEFAULT_REPLY_MAX_CHARS = 600;

export const DEFAULT_MAX_MINUTES = 10;
export const DEFAULT_DAILY_MINUTES = 60;

export const DEFAULT_MAX_UPLOAD_MB = 25;

/** JSON schema of the options (checked at start and in the dashboard). */
export const voiceOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    maxUploadMb: { type: 'number', exclusiveMinimum: 0, maximum: 1000, description: "the audio provider's upload limit in MB" },
    maxMinutes: { type: 'number', exclusiveMinimum: 0, maximum: 600, description: 'longest voice note or audio file transcribed, in minutes' },
    dailyMinutesPerUser: { type: 'number', minimum: 0, maximum: 100000, description: 'audio minutes one user may have transcribed per day (owners exempt)' },
    reactions: {
      type: 'object',
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean', description: 'auto emoji reactions by the audio provider chat model' },
        share: { type: 'number', minimum: 0, maximum: 1, description: 'share of messages considered for a reaction (0..1)' },
        cooldownMinutes: { type: 'number', minimum: 0, description: 'minimum minutes between two reactions in one chat' },
      },
    },
    replies: {
      type: 'object',
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean', description: 'answer voice notes with voice notes (each chat can change it with .voice on|off)' },
        maxChars: { type: 'integer', minimum: 1, maximum: 4000, description: 'answers longer than this go as text' },
      },
    },
  },
};

/**
 * Reads the live options with defaults.
 *
 * @example voiceOptions(ctx.options).reactions.share // 0.1
 */
export function voiceOptions(section: PluginSection): VoiceOptions {
  const r = (section.reactions ?? {}) as Partial<ReactionOptions>;
  const replies = (section.replies ?? {}) as Partial<VoiceReplyOptions>;
  const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : d);
  return {
    maxUploadMb: num(section.maxUploadMb, DEFAULT_MAX_UPLOAD_MB) || DEFAULT_MAX_UPLOAD_MB,
    maxMinutes: num(section.maxMinutes, DEFAULT_MAX_MINUTES) || DEFAULT_MAX_MINUTES,
    dailyMinutesPerUser: num(section.dailyMinutesPerUser, DEFAULT_DAILY_MINUTES),
    reactions: {
      enabled: typeof r.enabled === 'boolean' ? r.enabled : DEFAULT_REACTIONS.enabled,
      share: Math.min(1, num(r.share, DEFAULT_REACTIONS.share)),
      cooldownMinutes: num(r.cooldownMinutes, DEFAULT_REACTIONS.cooldownMinutes),
    },
    replies: {
      enabled: replies.enabled === true,
      maxChars: num(replies.maxChars, DEFAULT_REPLY_MAX_CHARS) || DEFAULT_REPLY_MAX_CHARS,
    },
  };
}
