import type { StoredDoc } from '../../core/index.js';
import type { BudgetDoc } from './stores.js';

export { AUDIO_BUDGET } from './stores.js';

/**
 * The daily per-user audio allowance: how many seconds of audio one user may have uploaded for transcription per
 * UTC day. Kept in `data/audio_budget.json` so a restart does not hand out a fresh allowance.
 *
 * @example
 * const budget = new AudioBudget(host.store.doc(AUDIO_BUDGET), Date.now);
 * if (await budget.remaining(user, 3600) >= seconds) await budget.spend(user, seconds);
 */
export class AudioBudget {
  constructor(private readonly doc: StoredDoc<BudgetDoc>, private readonly now: () => number) {}

  private today(): string {
    return new Date(this.now()).toISOString().slice(0, 10);
  }

  private async current(): Promise<BudgetDoc> {
    const doc = await this.doc.get();
    if (doc.day !== this.today() || typeof doc.used !== 'object' || !doc.used) {
      return this.doc.update(() => ({ day: this.today(), used: {} }));
    }
    return doc;
  }

  /** Seconds this user has already used today. */
  async used(user: string): Promise<number> {
    return (await this.current()).used[user] ?? 0;
  }

  /** Records seconds uploaded for this user today. */
  async spend(user: string, seconds: number): Promise<void> {
    await this.current();
    await this.doc.update((doc) => {
      doc.used[user] = (doc.used[user] ?? 0) + seconds;
    });
  }

}

/** `1 h 5 min`, `10 min`, `45 s`: a length for a sentence. */
export function spokenLength(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const h = Math.floor(s / 3600);
  const m = Math.round((s % 3600) / 60);
  return h ? `${h} h${m ? ` ${m} min` : ''}` : `${m} min`;
}
