import { DEFAULT_PREMIUM_PHRASES, Type, type Static } from '../../core/index.js';
import { DEFAULT_ANTHROPIC_VERSION } from '../../core/builtin.js';
import { DEFAULT_MAX_IMAGE_PIXELS } from '../../core/media.js';

/** Seconds of a video's sound transcribed with its frames (plugins.vision.videoSoundSeconds). */
const DEFAULT_VIDEO_SOUND_SECONDS = 120;

/** The question asked of a photo sent without one. */
export const DEFAULT_QUESTION = 'What is in this image? Describe it briefly.';

/** The vision plugin's options (`plugins.vision` in config.json), declared once with their defaults. */
export const visionOptions = Type.Object({
  premiumPhrases: Type.Array(Type.String({ minLength: 3 }), { title: 'Premium phrases', default: DEFAULT_PREMIUM_PHRASES, description: 'phrases that ask for the premium model (empty: the defaults)' }),
  maxImageBytes: Type.Integer({ title: 'Largest image sent (bytes)', minimum: 10_000, maximum: 3_750_000, default: 3_750_000, description: 'largest image sent to the provider (bytes); larger ones are scaled down' }),
  maxDimension: Type.Integer({ title: 'Longest image side (pixels)', minimum: 200, maximum: 8000, default: 1568, description: 'longest side (pixels) of the image sent to the provider' }),
  maxDownloadBytes: Type.Integer({ title: 'Largest download (bytes)', minimum: 100_000, default: 30_000_000, description: 'largest image fetched from WhatsApp (bytes)' }),
  maxPixels: Type.Integer({ title: 'Most pixels an image may have', minimum: 1_000_000, default: DEFAULT_MAX_IMAGE_PIXELS, description: 'most pixels (width × height) an image may declare; larger ones are refused before decoding' }),
  maxTokens: Type.Integer({ title: 'Longest answer (tokens)', minimum: 50, maximum: 8192, default: 1024, description: 'longest answer (tokens)' }),
  defaultQuestion: Type.String({ title: 'Question for a bare photo', minLength: 1, maxLength: 500, default: DEFAULT_QUESTION, description: 'the question asked of a photo sent without one' }),
  videoSoundSeconds: Type.Integer({ minimum: 0, maximum: 1800, default: DEFAULT_VIDEO_SOUND_SECONDS, title: 'Seconds of a video heard', description: "most seconds of a video's sound transcribed with its frames (a longer video: 4 windows spread over it); 0: videos are only seen" }),
  maxPhotosPerTurn: Type.Integer({ minimum: 1, maximum: 20, default: 5, title: 'Photos per question', description: 'most photos of an album (or photos sent one after the other) looked at in one answer; each costs input tokens' }),
  anthropicVersion: Type.String({ title: 'Anthropic API version', pattern: '^\\d{4}-\\d{2}-\\d{2}$', default: DEFAULT_ANTHROPIC_VERSION, description: 'the anthropic-version header of /v1/messages' }),
});

export type VisionOptions = Static<typeof visionOptions>;
