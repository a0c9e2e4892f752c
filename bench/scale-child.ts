/**
 * One account for the scale scenario (run with `--expose-gc` and the product's node flags): the real app on the
 * memory transport plus its web server (port 0), as `npm start` runs it less WhatsApp. Answers a `.ping` to prove it
 * works, forces GC and prints `{"phase":"started",…}`. Then reads commands on stdin: `messages` sends
 * `BENCH_MESSAGES` messages (mostly .ping, every fifth an AI question to the fake gateway at `BENCH_SECOND_URL`),
 * forces GC and prints `{"phase":"messages",…}`; `stop` (or the end of stdin) stops cleanly.
 */
import readline from 'node:readline';
import { startWebServer } from '../web/server.js';
import { makeBotDir, startBenchApp, userId } from './fixture.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run me with node --expose-gc');
const total = Number(process.env.BENCH_MESSAGES ?? 10_000);
const burst = 100;
const chats = Array.from({ length: 20 }, (_, i) => userId(i + 1));
const MB = 1024 * 1024;

function report(phase: string, extra: Record<string, unknown> = {}): void {
  gc!();
  gc!();
  const m = process.memoryUsage();
  process.stdout.write(JSON.stringify({ phase, pid: process.pid, rssMB: m.rss / MB, heapUsedMB: m.heapUsed / MB, ...extra }) + '\n');
}

const bench = await startBenchApp(await makeBotDir({ access: 'everyone', chats, historyEntries: 50, facts: 5 }), { API_KEY: 'bench-key-second', BASE_URL: process.env.BENCH_SECOND_URL ?? '', MODEL: 'bench-model' });
const web = await startWebServer(bench.app, () => bench.transport);
const pong = (await bench.transport.push({ text: '.ping' })).some((a) => a.type === 'text' && a.text.startsWith('pong'));
bench.transport.actions.length = 0;
report('started', { pong });

for await (const line of readline.createInterface({ input: process.stdin })) {
  if (line.trim() === 'messages') {
    let replies = 0;
    for (let sent = 0; sent < total; ) {
      const pending: Promise<unknown>[] = [];
      for (let i = 0; i < burst && sent < total; i++, sent++) {
        const chat = chats[sent % chats.length];
        pending.push(bench.transport.deliver({ chatId: chat, senderId: chat, text: sent % 5 === 4 ? `What about the return train on Sunday? (${sent})` : '.ping' }));
      }
      await Promise.all(pending);
      replies += bench.transport.actions.filter((a) => a.type === 'text').length;
      bench.transport.actions.length = 0;
    }
    await bench.app.bot.idle();
    await Promise.all([bench.app.bot.histories.flush(), bench.app.bot.memories.flush(), bench.app.usage.flush()]);
    report('messages', { sent: total, replies });
  }
  if (line.trim() === 'stop') break;
}
await web.close();
await bench.stop();
process.exit(0);
