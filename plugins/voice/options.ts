import { Type, type Static } from '../../core/index.js';

export const DEFAULT_MAX_UPLOAD_MB = 25;
export const DEFAULT_MAX_MINUTES = 10;
export const DEFAULT_DAILY_MINUTES = 60;
export const DEFAULT_REPLY_MAX_CHARS = 600;
export const DEFAULT_TLDR_AFTER_SECONDS = 60;

/** Auto-reaction settings (config.json `plugins.voice.reactions`). */
export interface ReactionOptions {
  enabled: boolean;
  /** Share of messages considered for a reaction, 0..1. */
  share: number;
  /** Minimum minutes between two reactions in one chat. */
  cooldownMinutes: number;
}

export const DEFAULT_REACTIONS: ReactionOptions = { enabled: true, share: 0.1, cooldownMinutes: 10 };

/** Text-to-speech defaults (Groq's OpenAI-compatible speech model), overridable with AUDIO_SPEECH_MODEL / AUDIO_SPEECH_VOICE. */
export const DEFAULT_SPEECH_MODEL = 'canopylabs/orpheus-v1-english';
export const DEFAULT_SPEECH_VOICE = 'autumn';

/**
 * The voice plugin's options in config.json (`plugins.voice`), declared once: validated at start and at every
 * dashboard edit, delivered with these defaults filled in.
 */
export const voiceOptionsSchema = Type.Object(
  {
    maxUploadMb: Type.Number({ title: 'Largest upload (MB)', exclusiveMinimum: 0, maximum: 1000, default: DEFAULT_MAX_UPLOAD_MB, description: "the audio provider's upload limit in MB (larger files are shrunk or split)" }),
    maxMinutes: Type.Number({ title: 'Longest recording (minutes)', exclusiveMinimum: 0, maximum: 600, default: DEFAULT_MAX_MINUTES, description: 'longest voice note or audio file transcribed, in minutes' }),
    dailyMinutesPerUser: Type.Number({ title: 'Minutes per person a day', minimum: 0, maximum: 100000, default: DEFAULT_DAILY_MINUTES, description: 'audio minutes one user may have transcribed per day (owners exempt)' }),
    tldrAfterSeconds: Type.Number({ title: 'TL;DR from (seconds)', minimum: 0, maximum: 36000, default: DEFAULT_TLDR_AFTER_SECONDS, description: 'in the tldr voice mode, notes longer than this get a short summary (shorter ones their words)' }),
    reactions: Type.Object(
      {
        enabled: Type.Boolean({ title: 'Emoji reactions on', default: DEFAULT_REACTIONS.enabled, description: 'auto emoji reactions by the audio provider chat model' }),
        share: Type.Number({ title: 'Share of messages reacted to', minimum: 0, maximum: 1, default: DEFAULT_REACTIONS.share, description: 'share of messages considered for a reaction (0..1)' }),
        cooldownMinutes: Type.Number({ title: 'Minutes between reactions', minimum: 0, default: DEFAULT_REACTIONS.cooldownMinutes, description: 'minimum minutes between two reactions in one chat' }),
      },
      { title: 'Emoji reactions', description: 'the bot now and then reacts to a message with an emoji', additionalProperties: false, default: {} },
    ),
    replies: Type.Object(
      {
        enabled: Type.Boolean({ title: 'Voice replies on', default: false, description: 'answer voice notes with voice notes (each chat can change it with .voice on|off)' }),
        maxChars: Type.Integer({ title: 'Longest voice reply (characters)', minimum: 1, maximum: 4000, default: DEFAULT_REPLY_MAX_CHARS, description: 'answers longer than this go as text' }),
      },
      { title: 'Voice replies', description: 'answers to voice notes as voice notes', additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** The options as handlers, tools and the transcriber see them (defaults filled in). */
export type VoiceOptions = Static<typeof voiceOptionsSchema>;
