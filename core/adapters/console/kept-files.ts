import { existsSync } from 'node:fs';
import { copyFile, link, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * The files the console printed (`bot [document] <path>`), readable until the console exits.
 *
 * The bot removes some files right after sending them (a `.mydata` export, a converted clip): on WhatsApp the
 * recipient has the bytes by then, but on the console the printed path is all the person has. So each printed file is
 * kept aside (a hard link, or a copy across file systems); one the bot removed is put back at its printed path after
 * the line that sent it, and removed again when the console stops — what the bot meant to delete does not outlive the
 * session. Files the bot keeps are never touched.
 */
export class KeptFiles {
  private folder?: Promise<string>;
  private readonly kept = new Map<string, string>();
  private readonly restored = new Set<string>();
  private seq = 0;

  /** Keeps `file` aside (as it is now) so it can be put back if the bot removes it. */
  async keep(file: string): Promise<void> {
    if (this.kept.has(file) || !existsSync(file)) return;
    this.folder ??= mkdtemp(path.join(os.tmpdir(), 'wa-console-kept-'));
    const aside = path.join(await this.folder, `${++this.seq}-${path.basename(file)}`);
    await link(file, aside).catch(() => copyFile(file, aside));
    this.kept.set(file, aside);
  }

  /** Puts back every printed file the bot has removed since it was printed. */
  async restoreRemoved(): Promise<void> {
    for (const [file, aside] of this.kept) {
      if (existsSync(file) || this.restored.has(file)) continue;
      await link(aside, file).catch(() => copyFile(aside, file)).then(
        () => this.restored.add(file),
        () => undefined, // its folder is gone too: nothing to put it back into
      );
    }
  }

  /** At the console's end: removes what was only put back for the session, and the kept copies. */
  async removeAll(): Promise<void> {
    for (const file of this.restored) await rm(file, { force: true });
    this.restored.clear();
    this.kept.clear();
    const folder = this.folder;
    this.folder = undefined;
    if (folder) await rm(await folder, { recursive: true, force: true });
  }
}
