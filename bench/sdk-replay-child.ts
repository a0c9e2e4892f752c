/**
 * The console figure's floor as a black box, like the console itself: a process started with the same node flags
 * that replays one chat-completion request (`BENCH_BODY_FILE`, the bot's own last request) `BENCH_COUNT` times, one
 * after the other, through the `openai` SDK against `BASE_URL`, and prints `answer> <text>` per reply on stdout as
 * the console prints `bot> <text>`. Exits 1 when an answer has no text.
 */
import { readFile } from 'node:fs/promises';
import OpenAI from 'openai';

const body = JSON.parse(await readFile(process.env.BENCH_BODY_FILE ?? '', 'utf8')) as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
const count = Number(process.env.BENCH_COUNT ?? 0);
// Built like the provider chain's clients: no SDK retries.
const client = new OpenAI({ apiKey: process.env.API_KEY, baseURL: process.env.BASE_URL, maxRetries: 0 });
for (let i = 0; i < count; i++) {
  const answer = await client.chat.completions.create(body);
  const text = answer.choices?.[0]?.message?.content;
  if (!text) process.exit(1);
  process.stdout.write(`answer> ${text}\n`);
}
