import { spawn } from 'node:child_process';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ROOT } from './checkout.js';

/**
 * `npm run test:stress`: the whole suite (as `npm test` runs it) beside four busy loops, started here and stopped
 * when the suite ends, however it ends. A test that passes only on an idle machine (a fixed sleep, a guessed
 * deadline) fails here. Exits with the suite's code. `STRESS_BUSY_LOOPS` changes the number of loops.
 */
const BUSY_LOOPS = Number(process.env.STRESS_BUSY_LOOPS ?? 4);

// Threads of this process: they end with it, so no loop outlives the run (not even when it is killed).
const loops = Array.from({ length: BUSY_LOOPS }, () => new Worker('for (;;) {}', { eval: true }));
console.log(`test:stress: ${loops.length} busy loops running beside the suite`);

const mocha = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
// Files given on the command line replace the whole suite (`npm run test:stress -- dist/test/plugins/remind/*.test.js`);
// without them, .mocharc.cjs names every test file, the slowest first, as for `npm test`.
const files = process.argv.slice(2);
const suite = spawn(process.execPath, [mocha, '--parallel', '--jobs', '4', ...files], { cwd: ROOT, stdio: 'inherit' });
const stop = async (code: number) => {
  await Promise.all(loops.map((loop) => loop.terminate()));
  process.exit(code);
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => suite.kill(signal));
suite.on('exit', (code, signal) => void stop(code ?? (signal ? 1 : 0)));
