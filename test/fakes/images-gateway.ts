import type { FakeBehaviour, RecordedRequest } from '../../app/testing/http-fake.js';
import { HttpFake } from '../../app/testing/http-fake.js';
import { completion, lastUserText } from './openai-gateway.js';

/** A real 1×1 PNG picture (its signature and IHDR are what the bot checks). */
export const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

/**
 * A fake OpenAI-style gateway on 127.0.0.1 with (or without) `POST /v1/images/generations`: chat completions answer
 * "<name>: <text>" unless `chat` says otherwise; the images endpoint answers `b64_json` of a PNG by default, or
 * `{ url }` pointing at its own `GET /pictures/fox.png`. Without the endpoint it answers 404 there, as gateways do.
 */
export class FakeImagesGateway {
  private constructor(readonly http: HttpFake) {}

  static async start(options: { images: boolean; chat?: (req: RecordedRequest) => FakeBehaviour; imagesStatus?: number }): Promise<FakeImagesGateway> {
    const http = await HttpFake.start({
      'GET /': { status: 200, text: 'gateway ok' },
      'POST /v1/chat/completions': options.chat ?? ((req) => ({ status: 200, json: completion(`main: ${lastUserText(req)}`) })),
      ...(options.images
        ? { 'POST /v1/images/generations': { status: 200, json: { created: 1, data: [{ b64_json: TINY_PNG.toString('base64') }] } } }
        : options.imagesStatus
          ? { 'POST /v1/images/generations': { status: options.imagesStatus, json: { error: { message: 'not here' } } } }
          : {}),
      'GET /pictures/fox.png': { status: 200, body: TINY_PNG, headers: { 'content-type': 'image/png' } },
    });
    return new FakeImagesGateway(http);
  }

  get url(): string {
    return this.http.url;
  }

  /** Answers the next image request with a URL of the fake's own picture route. */
  answerWithUrl(): void {
    this.http.next('POST /v1/images/generations', { status: 200, json: { created: 1, data: [{ url: `${this.url}/pictures/fox.png` }] } });
  }

  next(behaviour: FakeBehaviour): void {
    this.http.next('POST /v1/images/generations', behaviour);
  }

  imageRequests(): RecordedRequest[] {
    return this.http.received('POST /v1/images/generations');
  }

  pictureFetches(): RecordedRequest[] {
    return this.http.received('GET /pictures/fox.png');
  }

  chats(): RecordedRequest[] {
    return this.http.received('POST /v1/chat/completions');
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
