import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testFfmpeg } from '../plugins/voice/audio-files.js';
import { HttpFake, type FakeBehaviour, type RecordedRequest } from '../../app/testing/http-fake.js';
import { completion } from './openai-gateway.js';

/** One transcription upload as the fake parsed it from the multipart body. */
export interface TranscriptionUpload {
  /** The bearer key the request carried (fake keys only). */
  key: string;
  model: string;
  fileName: string;
  fileType: string;
  bytes: Buffer;
  responseFormat?: string;
}

/** Ready-made answers of an OpenAI-compatible audio provider (Groq style). */
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

/** One text-to-speech request (`POST /v1/audio/speech`) as the fake received it. */
export interface SpeechRequest {
  key: string;
  model: string;
  voice: string;
  input: string;
  responseFormat?: string;
}

let speechWav: Buffer | undefined;

/** Real speech-like audio for the speech endpoint: a short tone as 48 kHz WAV, made once with ffmpeg. */
export function speechAudio(): Buffer {
  if (!speechWav) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'fake-speech-'));
    try {
      const file = path.join(dir, 'speech.wav');
      execFileSync(testFfmpeg(), ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=300:duration=1', '-ar', '48000', '-ac', '1', file]);
      speechWav = readFileSync(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return speechWav;
}

/** Parses a multipart/form-data body with the platform's own parser (undici's FormData). */
export async function parseMultipart(req: RecordedRequest): Promise<TranscriptionUpload> {
  const form = await new Response(new Uint8Array(req.body), { headers: { 'content-type': String(req.headers['content-type'] ?? '') } }).formData();
  const file = form.get('file');
  const blob = file && typeof file === 'object' ? (file as File) : undefined;
  return {
    key: String(req.headers.authorization ?? '').replace(/^Bearer\s+/i, ''),
    model: String(form.get('model') ?? ''),
    fileName: blob?.name ?? '',
    fileType: blob?.type ?? '',
    bytes: blob ? Buffer.from(await blob.arrayBuffer()) : Buffer.alloc(0),
    responseFormat: form.get('response_format')?.toString(),
  };
}

/**
 * A fake OpenAI-compatible audio provider on 127.0.0.1: `POST /v1/audio/transcriptions` (multipart, parsed and
 * recorded, answers `{ text }`), `POST /v1/chat/completions` (auto reactions, answers 👍 by default) and
 * `POST /v1/audio/speech` (voice replies, answers a real WAV).
 * Behaviours can be queued for the next uploads of one key (`forKey`) or set for a key until changed (`always`):
 * 429 with or without retry-after / reset headers, 401/403, 5xx, hang, drop.
 *
 * @example
 * const audio = await FakeAudioProvider.start(() => 'hello there');
 * audio.forKey('key-one', audioFailures.rateLimit(60));
 */
export class FakeAudioProvider {
  readonly uploads: TranscriptionUpload[] = [];
  private readonly keyQueues = new Map<string, FakeBehaviour[]>();
  private readonly keyAlways = new Map<string, FakeBehaviour>();
  transcript: (upload: TranscriptionUpload) => string;

  private constructor(readonly http: HttpFake, transcript: (upload: TranscriptionUpload) => string) {
    this.transcript = transcript;
  }

  static async start(transcript: (upload: TranscriptionUpload) => string = () => 'hello from the voice note'): Promise<FakeAudioProvider> {
    let fake!: FakeAudioProvider;
    const http = await HttpFake.start({
      'GET /': { status: 200, text: 'audio ok' },
      'POST /v1/audio/transcriptions': (req) => fake.transcribe(req),
      'POST /v1/chat/completions': (req) => ({ status: 200, json: completion('👍', { model: req.json?.model }) }),
      'POST /v1/audio/speech': { status: 200, body: speechAudio(), headers: { 'content-type': 'audio/wav' } },
    });
    http.probeAnswers.set('POST /v1/chat/completions', (req) => ({ status: 200, json: completion('OK', { model: req.json?.model }) }));
    fake = new FakeAudioProvider(http, transcript);
    return fake;
  }

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

  /** Queues behaviours for the next chat completions (auto reactions). */
  nextChat(...behaviours: FakeBehaviour[]): this {
    this.http.next('POST /v1/chat/completions', ...behaviours);
    return this;
  }

  /** Text-to-speech requests received (voice replies), answered or not. */
  get speeches(): SpeechRequest[] {
    return this.http.received('POST /v1/audio/speech').map((req) => ({
      key: String(req.headers.authorization ?? '').replace(/^Bearer\s+/i, ''),
      model: String(req.json?.model ?? ''),
      voice: String(req.json?.voice ?? ''),
      input: String(req.json?.input ?? ''),
      responseFormat: req.json?.response_format,
    }));
  }

  /** Queues behaviours for the next speech requests (failures: 500, 'hang', …). */
  nextSpeech(...behaviours: FakeBehaviour[]): this {
    this.http.next('POST /v1/audio/speech', ...behaviours);
    return this;
  }

  /** Chat-completion requests received (auto reactions). */
  chats(): RecordedRequest[] {
    return this.http.received('POST /v1/chat/completions');
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
