import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT } from './helpers/checkout.js';

/**
 * A test waits for an event (a log line, an action, a file change, the kit's `until`/`whenIdle`) or moves a fake
 * clock; it never sleeps a fixed time, which is too short on a busy machine and wasted on a quiet one. These patterns
 * find a fixed sleep in the test sources; the allow list names the few places where the sleeping is the subject.
 */
const FIXED_SLEEPS: Array<[RegExp, string]> = [
  [/setTimeout\(\s*(?:r|res|resolve|done|wake|next)\s*,/, 'a promise resolved by a timer'],
  [/setTimeout\(\s*\(\)\s*=>\s*(?:r|res|resolve|done|wake|next)\(\)\s*,/, 'a promise resolved by a timer'],
  [/\b(?:const|let|function)\s+(?:sleep|delay|pause)\b/, 'a sleep helper'],
  [/\b(?:sleep|delay|pause)\(\s*[\d_]+/, 'a sleep for a fixed time'],
  [/timers\/promises/, 'node:timers/promises (its setTimeout is a sleep)'],
  [/\bsleep\s+[\d.]+\b/, 'a shell sleep'],
];

/** `file` (relative to test/) and a bit of the line, with why that sleep is the thing under test. */
const ALLOWED: Array<{ file: string; line: string; why: string }> = [
  { file: 'plugins/workspace/sandbox.test.ts', line: 'time.sleep(30)', why: 'a hostile script inside the sandbox: its children must be held by the jail, not the test waiting' },
  { file: 'plugins/workspace/jail.test.ts', line: 'time.sleep(1)', why: 'a hostile script holding memory inside the jail while the jail counts it' },
  { file: 'core/pipeline/bursts.test.ts', line: ':sleep 1500', why: "the console's own :sleep command, under test: a pause longer than the debounce window in a piped script" },
  { file: 'fakes/whatsapp-wire-server.ts', line: 'setTimeout(resolve, left)', why: 'the deadline of a wait woken by each handshake, not a sleep' },
  { file: 'core/store/disk-full.test.ts', line: 'sleep 0.05', why: 'a shell inside the full-disk namespace waiting for the bot’s log line (no file-change tool there)' },
];

async function sources(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await sources(full)));
    else if (/\.(?:ts|mjs|cjs|js|sh|py)$/.test(entry.name)) found.push(full);
  }
  return found;
}

describe('the test suite waits on events, never on the clock', () => {
  it('no fixed sleep in test/ outside the allow list, and every allowed one is still there', async () => {
    const testDir = path.join(ROOT, 'test');
    const self = path.join(testDir, 'no-fixed-sleeps.test.ts');
    const hits: string[] = [];
    const used = new Set<string>();
    for (const file of await sources(testDir)) {
      if (file === self) continue;
      const rel = path.relative(testDir, file);
      (await readFile(file, 'utf8')).split('\n').forEach((text, i) => {
        for (const [pattern, what] of FIXED_SLEEPS) {
          if (!pattern.test(text)) continue;
          const allowed = ALLOWED.find((a) => a.file === rel && text.includes(a.line));
          if (allowed) used.add(`${allowed.file}|${allowed.line}`);
          else hits.push(`test/${rel}:${i + 1}: ${what}: ${text.trim()}`);
          break;
        }
      });
    }
    expect(hits, `fixed sleeps (await an event or use the kit's fake clock instead):\n${hits.join('\n')}`).to.deep.equal([]);
    expect(ALLOWED.filter((a) => !used.has(`${a.file}|${a.line}`)).map((a) => a.file), 'allow-list entries that match nothing any more').to.deep.equal([]);
  });
});
