import { createHash, randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import { copyFile, mkdir, rename } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * Fixture media made by ffmpeg are made once per test run and copied to each test that asks: an ffmpeg launch costs
 * ~0.3 s of CPU before it does anything (it loads ~200 libraries), and the suite asks for the same 1-second voice
 * note in a dozen files. The copies live in the run's temp folder (os.tmpdir(), see run-temp.ts, shared by the
 * parallel workers and removed at the end), named by the program and arguments that made them; every caller gets a
 * file of its own at the path it asked for, so no test can change what another reads.
 */
function keptAt(recipe: readonly string[], file: string): string {
  const key = createHash('sha256').update(JSON.stringify(recipe)).digest('hex').slice(0, 32);
  // The extension stays last: ffmpeg picks the output format from it.
  return path.join(os.tmpdir(), 'made-media', `${key}${path.extname(file)}`);
}

/** A name beside `kept` to make it under before the rename (two workers may make the same file at once). */
const scratchFor = (kept: string) => path.join(path.dirname(kept), `${randomUUID()}${path.extname(kept)}`);

/** Puts at `file` the media `make` writes (to the path it is given) for `recipe`, made at most once per run. */
export function madeOnceSync(recipe: readonly string[], file: string, make: (out: string) => void): void {
  const kept = keptAt(recipe, file);
  if (!existsSync(kept)) {
    mkdirSync(path.dirname(kept), { recursive: true });
    const scratch = scratchFor(kept);
    make(scratch);
    renameSync(scratch, kept);
  }
  copyFileSync(kept, file);
}

/** `madeOnceSync` for an asynchronous `make`. */
export async function madeOnce(recipe: readonly string[], file: string, make: (out: string) => Promise<unknown>): Promise<void> {
  const kept = keptAt(recipe, file);
  if (!existsSync(kept)) {
    await mkdir(path.dirname(kept), { recursive: true });
    const scratch = scratchFor(kept);
    await make(scratch);
    await rename(scratch, kept);
  }
  await copyFile(kept, file);
}
