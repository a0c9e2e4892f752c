import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { makeBotDir, settle, startBenchApp, userId } from '../fixture.js';
import { metric, type Check, type ScenarioResult } from '../result.js';

export interface PromptPrefixOptions {
  /** Turns of the scripted chat (the issue asks for 300). */
  turns: number;
}

/** A fold request (the model asked to fold turns into the chat summary), told apart by its instructions. */
const isFold = (body: string) => body.includes('running summary of a WhatsApp conversation');

/**
 * An upstream on 127.0.0.1 that records every request body and answers at once: a chat turn with a 240-character
 * answer, a fold with a ~1,600-character summary (about 400 tokens, half of `summaryMaxTokens`' default bound). What it measures is bytes, not time: nothing here depends on the machine's speed.
 */
async function recordingUpstream(): Promise<{ url: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const answer = (content: string) => JSON.stringify({ id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }], usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      if (req.url?.endsWith('/chat/completions')) bodies.push(body);
      const text = isFold(body) ? `The user is planning a trip to the coast. ${'They talked about trains, seats, weather and dates. '.repeat(30)}` : `Here is my answer: ${'the train leaves at 8:15 from platform 3, '.repeat(5)}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(answer(text));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bodies, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Bytes `b` shares with `a` from the start. */
function sharedPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

interface ChatFigures {
  /** Per turn: the share of its request that repeats the previous turn's request from the start. */
  shares: number[];
  /** Input bytes sent per turn, fold requests included, over the whole chat. */
  inputBytesPerTurn: number;
  /** The largest request of the chat, in bytes. */
  largest: number;
  folds: number;
}

/** One scripted chat of `turns` turns through the real app, with chat summaries on or off. */
async function scriptedChat(turns: number, summarize: boolean): Promise<ChatFigures> {
  const upstream = await recordingUpstream();
  const dir = await makeBotDir({ access: 'everyone', config: { history: { maxMessages: 50, maxPromptTokens: 6000, summarize, summaryMaxTokens: 800 } } });
  const bench = await startBenchApp(dir, { API_KEY: 'k', BASE_URL: upstream.url, MODEL: 'm' });
  try {
    const chat = userId(39_000);
    for (let i = 1; i <= turns; i++) {
      await bench.transport.push({ chatId: chat, senderId: chat, text: `Turn ${i}: what about the ${['train', 'hotel', 'weather', 'tickets'][i % 4]} for day ${1 + (i % 7)} of the trip?` });
      // Each turn waits for what its answer left running (a fold), as a person's next message mostly comes later.
      await settle(bench);
    }
  } finally {
    await bench.stop();
    await upstream.close();
  }
  const chats = upstream.bodies.filter((b) => !isFold(b));
  const shares: number[] = [];
  for (let i = 1; i < chats.length; i++) shares.push(sharedPrefix(chats[i - 1], chats[i]) / chats[i].length);
  const input = upstream.bodies.reduce((sum, b) => sum + b.length, 0);
  return { shares, inputBytesPerTurn: input / turns, largest: Math.max(...upstream.bodies.map((b) => b.length)), folds: upstream.bodies.length - chats.length };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const pct = (x: number) => Math.round(x * 1000) / 10;

/**
 * Issue 39: one scripted chat of `turns` turns, twice in the same run — today's sliding window (`history.summarize`
 * false) and chat summaries — through the real app against a recording upstream. Reports the mean share of each
 * request that repeats the previous request's bytes from the start (what a provider's prompt cache can reuse) and the
 * input bytes per turn (fold requests included), as a ratio of the two runs. Targets: shared prefix ≥ 92 % with
 * summaries; input per turn no more than the sliding window's (ratio ≤ 1).
 */
export async function promptPrefix(options: PromptPrefixOptions): Promise<ScenarioResult> {
  const sliding = await scriptedChat(options.turns, false);
  const summaries = await scriptedChat(options.turns, true);
  const ratio = summaries.inputBytesPerTurn / sliding.inputBytesPerTurn;
  const slidingShare = mean(sliding.shares);
  const summaryShare = mean(summaries.shares);
  const n = summaries.shares.length;
  const checks: Check[] = [
    { name: 'prompt-prefix: summaries folded the chat in chunks', ok: summaries.folds > 0 && summaries.folds < options.turns / 5, detail: `${summaries.folds} folds over ${options.turns} turns` },
    { name: 'prompt-prefix: no request grows without bound', ok: summaries.largest < 2 * sliding.largest + 8000, detail: `largest request ${summaries.largest} bytes with summaries, ${sliding.largest} with the sliding window` },
  ];
  return {
    id: 'prompt-prefix',
    title: `Prompt prefix shared with the previous request, ${options.turns}-turn chat: sliding window vs chat summaries`,
    metrics: [
      metric('shared prefix, sliding window (today)', '%', pct(slidingShare), pct(Math.min(...sliding.shares)), sliding.shares.length, undefined, undefined, 'mean (the p99 column: the lowest turn); the window shifts by one turn each time, so only system prompt and tools repeat'),
      metric('shared prefix, chat summaries', '%', pct(summaryShare), pct(Math.min(...summaries.shares)), n, 'mean ≥ 92 %', summaryShare >= 0.92, 'mean (the p99 column: the lowest turn)'),
      metric('input per turn, summaries ÷ sliding window', 'x', ratio, ratio, options.turns, '≤ 1', ratio <= 1, `${Math.round(summaries.inputBytesPerTurn / 4)} vs ${Math.round(sliding.inputBytesPerTurn / 4)} tokens (bytes ÷ 4), folds included`),
    ],
    checks,
    data: { sliding: { share: slidingShare, inputBytesPerTurn: sliding.inputBytesPerTurn, largest: sliding.largest }, summaries: { share: summaryShare, inputBytesPerTurn: summaries.inputBytesPerTurn, largest: summaries.largest, folds: summaries.folds } },
  };
}
