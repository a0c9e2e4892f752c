/**
 * Child process for the memory part of the start-up scenario (run with `--expose-gc`): starts the real app, then
 * sends `BENCH_MESSAGES` messages, `BENCH_BURST` at a time, in intervals of `BENCH_INTERVAL` (mostly .ping, every fifth an AI question to the fake gateway at
 * `BENCH_SECOND_URL`) and after each interval forces GC and records RSS and heap. Prints one JSON line on stdout.
 */
import { makeBotDir, startBenchApp, userId } from './fixture.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run me with node --expose-gc');
const total = Number(process.env.BENCH_MESSAGES ?? 10_000);
const interval = Number(process.env.BENCH_INTERVAL ?? 500);
// Messages delivered at once: a busy bot, not a synthetic flood (a 500-message flood adds ~20 MB of V8 heap
// headroom to the RSS that GC does not hand back; the heap itself stays flat).
const burst = Number(process.env.BENCH_BURST ?? 100);
const chats = Array.from({ length: 20 }, (_, i) => userId(i + 1));
const MB = 1024 * 1024;

const collect = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return { rssMB: m.rss / MB, heapUsedMB: m.heapUsed / MB, externalMB: m.external / MB };
};

const bench = await startBenchApp(await makeBotDir({ access: 'everyone', chats, historyEntries: 50, facts: 5 }), { API_KEY: 'bench-key-second', BASE_URL: process.env.BENCH_SECOND_URL ?? '', MODEL: 'bench-model' });
const samples = [{ messages: 0, ...collect() }];
let sent = 0;
let replies = 0;
while (sent < total) {
  const end = Math.min(total, sent + interval);
  while (sent < end) {
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < burst && sent < end; i++, sent++) {
      const chat = chats[sent % chats.length];
      pending.push(bench.transport.deliver({ chatId: chat, senderId: chat, text: sent % 5 === 4 ? `What about the return train on Sunday? (${sent})` : '.ping' }));
    }
    await Promise.all(pending);
    replies += bench.transport.actions.filter((a) => a.type === 'text').length;
    bench.transport.actions.length = 0; // the memory transport's own record is the bench's, not the bot's
  }
  await bench.app.bot.idle();
  await Promise.all([bench.app.bot.histories.flush(), bench.app.bot.memories.flush(), bench.app.usage.flush()]);
  samples.push({ messages: sent, ...collect() });
}
await bench.stop();
process.stdout.write(JSON.stringify({ samples, replies, sent }) + '\n');
