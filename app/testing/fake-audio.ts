import { chatCompletion } from './fake-model.js';
import { HttpFake, type FakeBehaviour, type RecordedRequest } from './http-fake.js';

/** One transcription upload as the fake parsed it from the multipart body. */
export interface TranscriptionUpload {
  /** The bearer key the request carried. */
  key: string;
  model: string;
  fileName: string;
  fileType: string;
  bytes: Buffer;
  responseFormat?: string;
}

/** One text-to-speech request (`POST /v1/audio/speech`) as the fake received it. */
export interface SpeechRequest {
  key: string;
  model: string;
  voice: string;
  input: string;
  responseFormat?: string;
}

/** Ready-made answers of an OpenAI-compatible audio provider (Groq style), for `forKey`, `always`, `nextChat`. */
export const audioFailures = {
  rateLimit: (retryAfterSeconds?: number): FakeBehaviour => ({
    status: 429,
    json: { error: { message: 'Rate limit reached for model `whisper` in organization `org_SECRET` on seconds of audio per hour (ASH).', type: 'tokens', code: 'rate_limit_exceeded' } },
    headers: retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) },
  }),
  rateLimitWithReset: (reset: string): FakeBehaviour => ({
    status: 429,
    json: { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } },
    headers: { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': reset, 'x-ratelimit-remaining-tokens': '5000', 'x-ratelimit-reset-tokens': '1s' },
  }),
  dailyLimit: { status: 429, json: { error: { message: 'Rate limit reached for model `whisper` on requests per day (RPD): Limit 2000, Used 2000.', type: 'requests', code: 'rate_limit_exceeded' } } } as FakeBehaviour,
  badKey: { status: 401, json: { error: { message: 'Invalid API Key', type: 'invalid_request_error', code: 'invalid_api_key' } } } as FakeBehaviour,
  forbidden: { status: 403, json: { error: { message: 'Organization has been restricted', type: 'permission_error' } } } as FakeBehaviour,
  serverError: { status: 503, json: { error: { message: 'Service Unavailable', type: 'internal_server_error' } } } as FakeBehaviour,
  noText: { status: 200, json: { x_groq: { id: 'req_1' } } } as FakeBehaviour,
};

let speechWav: Buffer | undefined;

/**
 * What the speech endpoint answers: one second of a 300 Hz tone as a 48 kHz mono 16-bit PCM WAV — real audio that
 * ffmpeg converts like a provider's speech, made here rather than by ffmpeg so the kit needs no ffmpeg of its own.
 */
export function speechAudio(): Buffer {
  if (speechWav) return speechWav;
  const rate = 48_000;
  const samples = rate;
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 300 * i) / rate) * 0.5 * 32767), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28); // bytes per second
  header.writeUInt16LE(2, 32); // bytes per frame
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data.length, 40);
  speechWav = Buffer.concat([header, data]);
  return speechWav;
}

/** Parses a multipart/form-data upload with the platform's own parser (undici's FormData). */
export async function parseMultipart(req: RecordedRequest): Promise<TranscriptionUpload> {
  const form = await new Response(new Uint8Array(req.body), { headers: { 'content-type': String(req.headers['content-type'] ?? '') } }).formData();
  const file = form.get('file');
  const blob = file && typeof file === 'object' ? (file as File) : undefined;
  return {
    key: bearer(req),
    model: String(form.get('model') ?? ''),
    fileName: blob?.name ?? '',
    fileType: blob?.type ?? '',
    bytes: blob ? Buffer.from(await blob.arrayBuffer()) : Buffer.alloc(0),
    responseFormat: form.get('response_format')?.toString(),
  };
}

const bearer = (req: RecordedRequest) => String(req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');

/**
 * An OpenAI-compatible audio provider on 127.0.0.1, for a plugin that needs `audio`: `POST /v1/audio/transcriptions`
 * (multipart, parsed and recorded in `uploads`, answers `{ text: transcript(upload) }`), `POST /v1/chat/completions`
 * (the audio chat model, `AUDIO_CHAT_MODEL`: answers 👍) and `POST /v1/audio/speech` (answers a real WAV). Give it to
 * `startTestBot` as `audio` and the bot's `AUDIO_BASE_URL` and audio key point at it. Behaviours can be queued for the
 * next uploads made with one key (`forKey`) or set for a key until `clear` (`always`): 429 with or without
 * retry-after / reset headers (`audioFailures`), 401/403, 5xx, `'hang'`, `'drop'`.
 *
 * @example
 * const audio = await FakeAudio.start(() => 'hello there');
 * audio.forKey('test-kit-audio-key', audioFailures.rateLimit(60));
 * const bot = await startTestBot(myPlugin, { audio });
 */
export class FakeAudio {
  readonly uploads: TranscriptionUpload[] = [];
  private readonly keyQueues = new Map<string, FakeBehaviour[]>();
  private readonly keyAlways = new Map<string, FakeBehaviour>();
  /** What a transcription answers; may be replaced between messages. */
  transcript: (upload: TranscriptionUpload) => string;

  private constructor(readonly http: HttpFake, transcript: (upload: TranscriptionUpload) => string) {
    this.transcript = transcript;
  }

  static async start(transcript: (upload: TranscriptionUpload) => string = () => 'hello from the voice note'): Promise<FakeAudio> {
    let fake!: FakeAudio;
    const http = await HttpFake.start({
      'GET /': { status: 200, text: 'fake audio' },
      'POST /v1/audio/transcriptions': (req) => fake.transcribe(req),
      'POST /v1/chat/completions': (req) => ({ status: 200, json: chatCompletion('👍', String(req.json?.model ?? 'fake-audio')) }),
      'POST /v1/audio/speech': { status: 200, body: speechAudio(), headers: { 'content-type': 'audio/wav' } },
    });
    http.probeAnswers.set('POST /v1/chat/completions', (req) => ({ status: 200, json: chatCompletion('OK', String(req.json?.model ?? 'fake-audio')) }));
    fake = new FakeAudio(http, transcript);
    return fake;
  }

  /** `http://127.0.0.1:<port>` (the bot's `AUDIO_BASE_URL` is this with `/v1`). */
  get url(): string {
    return this.http.url;
  }

  private async transcribe(req: RecordedRequest): Promise<FakeBehaviour> {
    const upload = await parseMultipart(req);
    this.uploads.push(upload);
    const queued = this.keyQueues.get(upload.key)?.shift();
    if (queued) return queued;
    const sticky = this.keyAlways.get(upload.key);
    if (sticky) return sticky;
    return { status: 200, json: { text: this.transcript(upload), x_groq: { id: 'req_fake' } } };
  }

  /** Queues behaviours for the next uploads made with `key`. */
  forKey(key: string, ...behaviours: FakeBehaviour[]): this {
    this.keyQueues.set(key, [...(this.keyQueues.get(key) ?? []), ...behaviours]);
    return this;
  }

  /** Answers every upload made with `key` this way (until `clear`). */
  always(key: string, behaviour: FakeBehaviour): this {
    this.keyAlways.set(key, behaviour);
    return this;
  }

  clear(key: string): this {
    this.keyAlways.delete(key);
    this.keyQueues.delete(key);
    return this;
  }

  /** Uploads made with one key. */
  uploadsWith(key: string): TranscriptionUpload[] {
    return this.uploads.filter((u) => u.key === key);
  }

  /** Queues behaviours for the next chat completions (the audio chat model). */
  nextChat(...behaviours: FakeBehaviour[]): this {
    this.http.next('POST /v1/chat/completions', ...behaviours);
    return this;
  }

  /** Chat-completion requests received (the audio chat model). */
  chats(): RecordedRequest[] {
    return this.http.received('POST /v1/chat/completions');
  }

  /** Text-to-speech requests received, answered or not. */
  get speeches(): SpeechRequest[] {
    return this.http.received('POST /v1/audio/speech').map((req) => ({
      key: bearer(req),
      model: String(req.json?.model ?? ''),
      voice: String(req.json?.voice ?? ''),
      input: String(req.json?.input ?? ''),
      responseFormat: req.json?.response_format,
    }));
  }

  /** Queues behaviours for the next speech requests (failures: 500, `'hang'`, …). */
  nextSpeech(...behaviours: FakeBehaviour[]): this {
    this.http.next('POST /v1/audio/speech', ...behaviours);
    return this;
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
