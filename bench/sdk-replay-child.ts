/**
 * The console figure's floor as a black box, like the console itself: a process started with the same node flags
 * that replays one chat-completion request (`BENCH_BODY_FILE`, the bot's own last answer request) `BENCH_COUNT` times,
 * one after the other, through the `openai` SDK against `BASE_URL`, and prints `answer> <text>` per reply on stdout as
 * the console prints `bot> <text>`. With `BENCH_FOLD_FILE` and `BENCH_FOLDS`, it also sends that many of the bot's own
 * chat-summary fold requests, spread evenly between the answers and printing nothing (as the bot's folds print
 * nothing): the upstream work the bot's run asked for, request for request. Exits 1 when an answer has no text.
 */
import { readFile } from 'node:fs/promises';
import OpenAI from 'openai';

type Body = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
const body = JSON.parse(await readFile(process.env.BENCH_BODY_FILE ?? '', 'utf8')) as Body;
const count = Number(process.env.BENCH_COUNT ?? 0);
const folds = Number(process.env.BENCH_FOLDS ?? 0);
const foldBody = folds > 0 ? (JSON.parse(await readFile(process.env.BENCH_FOLD_FILE ?? '', 'utf8')) as Body) : undefined;
// Built like the provider chain's clients: no SDK retries.
const client = new OpenAI({ apiKey: process.env.API_KEY, baseURL: process.env.BASE_URL, maxRetries: 0 });
let foldsSent = 0;
for (let i = 0; i < count; i++) {
  const answer = await client.chat.completions.create(body);
  const text = answer.choices?.[0]?.message?.content;
  if (!text) process.exit(1);
  process.stdout.write(`answer> ${text}\n`);
  // After answer i + 1, the folds due by then (the bot folds after an answer, never before the first).
  for (const due = Math.floor(((i + 1) * folds) / count); foldBody && foldsSent < due; foldsSent++) await client.chat.completions.create(foldBody);
}
