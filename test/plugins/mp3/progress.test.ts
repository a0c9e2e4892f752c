import { expect } from 'chai';
import { mp3Options } from '../../../plugins/mp3/options.js';
import { jobPacing, StatusMessage } from '../../../plugins/mp3/progress.js';

const defaults = {
  progressIntervalMs: mp3Options.properties.progressIntervalMs.default as number,
  timeoutSeconds: mp3Options.properties.timeoutSeconds.default as number,
};

/**
 * A fake download on a controlled clock: it reports its percentage once a second for `seconds` (or at the given
 * times, ms after the start), then the job ends. Returns when each edit reached the chat (seconds since the job
 * started) and its text.
 */
async function runJob(options: { progressIntervalMs: number; timeoutSeconds: number }, seconds: number, reportsAt?: Array<{ at: number; percent: number }>): Promise<Array<{ at: number; text: string }>> {
  let now = 1_000_000;
  const start = now;
  const reports = reportsAt ?? Array.from({ length: seconds }, (_, i) => ({ at: (i + 1) * 1000, percent: ((i + 1) / seconds) * 100 }));
  const edits: Array<{ at: number; text: string }> = [];
  const ctx = {
    reply: async () => ({ id: 'S1' }),
    edit: async (_sent: unknown, text: string) => (edits.push({ at: (now - start) / 1000, text }), true),
    log: { debug: () => undefined },
  };
  const status = await StatusMessage.open(ctx as never, 'Downloading… 0%', { ...jobPacing(options), now: () => now });
  for (const { at, percent } of reports) {
    now = start + at;
    status.progress('Downloading…', percent);
    await Promise.resolve();
  }
  now = start + seconds * 1000;
  await status.finish('Done ✓');
  return edits;
}

describe('mp3 progress: edits spaced over the job (controlled clock)', () => {
  it('a job that runs to its time limit keeps its progress line moving until the end, within the edit budget', async () => {
    const edits = await runJob(defaults, defaults.timeoutSeconds);
    const progress = edits.filter((e) => /^Downloading… \d+%$/.test(e.text));
    expect(progress.length).to.be.within(10, StatusMessage.MAX_PROGRESS_EDITS);
    // Quick at first: the user sees the job move within seconds (this fake reaches 1% after 6 s).
    expect(progress[0]!.at).to.be.at.most(10);
    // Still moving in the last quarter of the time limit (a fixed gap spent the budget in ~30 s and froze there).
    expect(progress.at(-1)!.at).to.be.at.least(defaults.timeoutSeconds * 0.75);
    // Never frozen for long: no quiet stretch longer than a quarter of the time limit, the end included.
    const times = [0, ...progress.map((e) => e.at), defaults.timeoutSeconds];
    const longest = Math.max(...times.slice(1).map((t, i) => t - times[i]!));
    expect(longest).to.be.at.most(defaults.timeoutSeconds / 4);
    // The gaps grow: early edits come faster than late ones.
    expect(progress[1]!.at - progress[0]!.at).to.be.lessThan(progress.at(-1)!.at - progress.at(-2)!.at);
    // The last state is always shown.
    expect(edits.at(-1)).to.deep.equal({ at: defaults.timeoutSeconds, text: 'Done ✓' });
  });

  it('a short job shows its progress quickly; the percentages only go up', async () => {
    const edits = await runJob(defaults, 20);
    const percents = edits.filter((e) => e.text.startsWith('Downloading…')).map((e) => Number(/(\d+)%/.exec(e.text)![1]));
    expect(percents.length).to.be.at.least(3);
    expect([...percents].sort((a, b) => a - b)).to.deep.equal(percents);
    expect(edits.at(-1)!.text).to.equal('Done ✓');
  });

  it('after a stalled download resumes, the missed turns are not caught up in a burst of edits', async () => {
    // Stuck at 0% for 5 minutes, then 1% more every 100 ms.
    const reports = Array.from({ length: 100 }, (_, i) => ({ at: 300_000 + i * 100, percent: i + 1 }));
    const edits = await runJob(defaults, 600, reports);
    const after = edits.filter((e) => e.at >= 300 && e.text.startsWith('Downloading…')).map((e) => e.at);
    expect(after.length).to.be.at.least(2);
    for (let i = 1; i < after.length; i++) expect(after[i]! - after[i - 1]!, `edit ${i} after the stall`).to.be.at.least(defaults.progressIntervalMs / 1000);
  });

  it('a long time limit spreads the edits over WhatsApp’s edit window only (later edits would be refused)', async () => {
    const hour = { ...defaults, timeoutSeconds: 3600 };
    const edits = await runJob(hour, 3600);
    const progress = edits.filter((e) => e.text.startsWith('Downloading…'));
    expect(progress.length).to.equal(StatusMessage.MAX_PROGRESS_EDITS);
    expect(progress.at(-1)!.at).to.be.within(10 * 60, 15 * 60);
    expect(edits.at(-1)!.text).to.equal('Done ✓');
  });

  it('never more than MAX_PROGRESS_EDITS progress edits, however long the job runs past its limit; the end still goes out', async () => {
    const edits = await runJob(defaults, 5 * defaults.timeoutSeconds);
    expect(edits).to.have.length(StatusMessage.MAX_PROGRESS_EDITS + 1);
    expect(edits.at(-1)!.text).to.equal('Done ✓');
  });
});
