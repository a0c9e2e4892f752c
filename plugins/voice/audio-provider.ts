import type OpenAI from 'openai';
import { normalizeBaseUrl, type KeyPool } from '../../core/index.js';
import { boundedFetch, MAX_PROVIDER_ANSWER_BYTES, MAX_SPEECH_ANSWER_BYTES, openaiSdk } from '../../core/builtin.js';
import { DEFAULT_SPEECH_MODEL, DEFAULT_SPEECH_VOICE } from './options.js';

/** One file to upload for transcription. */
export interface UploadFile {
  bytes: Buffer;
  /** The name the provider sees; its extension decides how the provider reads the file (`.ogg`, never `.oga`). */
  fileName: string;
  mimetype: string;
}

export { DEFAULT_SPEECH_MODEL, DEFAULT_SPEECH_VOICE } from './options.js';

/** Thrown when the provider answered without a transcript. */
export class NoTranscriptError extends Error {}

export interface AudioProviderOptions {
  baseUrl: string;
  model: string;
  chatModel: string;
  /** Text-to-speech model and voice (`POST <base>/v1/audio/speech`). */
  speechModel?: string;
  speechVoice?: string;
  timeoutMs: number;
}

/**
 * The OpenAI-compatible audio provider (Groq by default), reached only through the key pool:
 * `POST <base>/v1/audio/transcriptions` (multipart) and `POST <base>/v1/chat/completions` for auto reactions.
 * SDK retries are off: the pool decides what happens after a failure.
 *
 * @example
 * const provider = new AudioProvider(pool, { baseUrl, model, chatModel, timeoutMs: 45000 });
 * const text = await provider.transcribe({ bytes, fileName: 'voice.ogg', mimetype: 'audio/ogg' });
 */
export class AudioProvider {
  private readonly clients = new Map<string, OpenAI>();
  private readonly baseUrl: string;

  constructor(private readonly pool: KeyPool, private readonly options: AudioProviderOptions) {
    this.baseUrl = normalizeBaseUrl(options.baseUrl).v1;
  }

  /** A client whose answers are read up to `maxBytes` and no further (a transcript's JSON, or spoken audio). */
  private async client(key: string, timeoutMs = this.options.timeoutMs, maxBytes = MAX_PROVIDER_ANSWER_BYTES): Promise<OpenAI> {
    const id = `${timeoutMs}:${maxBytes}:${key}`;
    let client = this.clients.get(id);
    if (!client) {
      const { default: OpenAI } = await openaiSdk();
      client = new OpenAI({ apiKey: key, baseURL: this.baseUrl, maxRetries: 0, timeout: timeoutMs, fetch: boundedFetch(maxBytes, "the audio provider's answer") });
      this.clients.set(id, client);
    }
    return client;
  }

  /** Transcribes one file; the same file moves to the next key when one is limited. */
  async transcribe(file: UploadFile): Promise<string> {
    return this.pool.run('transcription', async (key) => {
      const upload = await (await openaiSdk()).toFile(file.bytes, file.fileName, { type: file.mimetype });
      const result = await (await this.client(key)).audio.transcriptions.create({ file: upload, model: this.options.model, response_format: 'json' });
      const text = (result as { text?: unknown }).text;
      if (typeof text !== 'string') throw new NoTranscriptError('the audio provider answered without a transcript');
      return text.trim();
    });
  }

  /**
   * Speaks a text: `POST <base>/v1/audio/speech`, asking for WAV (the one format every OpenAI-compatible provider,
   * Groq included, returns). A failure never parks a key: a speech outage must not stop the bot from hearing.
   */
  async speak(text: string): Promise<Buffer> {
    return this.pool.run(
      'speech',
      async (key) => {
        const response = await (await this.client(key, this.options.timeoutMs, MAX_SPEECH_ANSWER_BYTES)).audio.speech.create({ model: this.options.speechModel ?? DEFAULT_SPEECH_MODEL, voice: (this.options.speechVoice ?? DEFAULT_SPEECH_VOICE) as 'alloy', input: text, response_format: 'wav' });
        return Buffer.from(await response.arrayBuffer());
      },
      { park: false },
    );
  }

  /** One short chat completion with the provider's chat model (auto reactions). Limits do not park keys here. */
  async chat(system: string, user: string, timeoutMs: number): Promise<string> {
    return this.pool.run(
      'reaction',
      async (key) => {
        const result = await (await this.client(key, timeoutMs)).chat.completions.create({
          model: this.options.chatModel,
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: user },
          ],
          max_tokens: 12,
          temperature: 0.7,
        });
        return result.choices?.[0]?.message?.content ?? '';
      },
      { park: false },
    );
  }
}
