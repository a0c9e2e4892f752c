import { HttpFake, type FakeBehaviour, type RecordedRequest } from '../../app/testing/http-fake.js';
import { completion } from './openai-gateway.js';

/** One result of a Tavily-style search answer. */
export interface FakeHit {
  title: string;
  url: string;
  content: string;
}

export const SAMPLE_HITS: FakeHit[] = [
  { title: 'Rupiah exchange rate today', url: 'https://www.example-rates.com/idr/usd/?utm_source=feed', content: '1 USD = 16,250 IDR on the interbank market.' },
  { title: 'Bank rates', url: 'https://news.example.org/markets/rupiah', content: 'The rupiah weakened slightly against the dollar.' },
];

/**
 * A fake Tavily-style search provider on 127.0.0.1: `POST /search` with a bearer key and `{ query, max_results }`
 * answers `{ results: [...] }` (SAMPLE_HITS by default). Queue failures with `next()`.
 *
 * @example
 * const search = await FakeSearchProvider.start();
 * search.next({ status: 500, json: { error: 'down' } });
 */
export class FakeSearchProvider {
  private constructor(readonly http: HttpFake) {}

  static async start(hits: FakeHit[] = SAMPLE_HITS): Promise<FakeSearchProvider> {
    const http = await HttpFake.start({
      'POST /search': (req) => ({ status: 200, json: { query: req.json?.query, results: hits.slice(0, req.json?.max_results ?? hits.length) } }),
    });
    http.probeAnswers.set('POST /search', (req) => ({ status: 200, json: { query: req.json?.query, results: hits.slice(0, 1) } }));
    return new FakeSearchProvider(http);
  }

  get url(): string {
    return this.http.url;
  }

  next(...behaviours: FakeBehaviour[]): this {
    this.http.next('POST /search', ...behaviours);
    return this;
  }

  /**
   * A slow provider: the next search is received and then held, unanswered, until `release()` (it answers as usual
   * then). `received` resolves once the search arrived. For what a user sees while a tool call takes long.
   *
   * @example
   * const held = search.holdNext();
   * await held.received; // …the bot is waiting on the search now
   * held.release();
   */
  holdNext(): { received: Promise<void>; release: () => void } {
    let arrived!: () => void;
    let release!: () => void;
    const received = new Promise<void>((resolve) => (arrived = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const answer = this.http.routes['POST /search'] as (req: RecordedRequest) => FakeBehaviour;
    this.next(async (req) => {
      arrived();
      await released;
      return answer(req);
    });
    return { received, release };
  }

  searches(): RecordedRequest[] {
    return this.http.received('POST /search');
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/**
 * A chat-completion answer of the audio provider's built-in-search model (Groq compound style): the model's text
 * and, in `executed_tools`, the pages it searched.
 */
export function compoundAnswer(text: string, hits: FakeHit[], model = 'groq/compound') {
  const body = completion(text, { model }) as ReturnType<typeof completion> & { choices: Array<{ message: Record<string, unknown> }> };
  body.choices[0].message.executed_tools = [{ type: 'search', arguments: '{}', search_results: { results: hits.map((h) => ({ ...h, score: 0.9 })) } }];
  return body;
}
