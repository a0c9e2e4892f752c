import { expect } from 'chai';
import { monthOf, priceOf, type Price } from '../../../core/kernel/core-plugins/profiles/prices.js';

const at = (iso: string) => Date.parse(iso);

describe('profiles: the month and the price of a turn', () => {
  it('counts a turn in the calendar month (UTC) it happened in, to the millisecond, in any order of asking', () => {
    expect(monthOf(at('2026-01-15T12:00:00.000Z'))).to.equal('2026-01');
    expect(monthOf(at('2026-01-31T23:59:59.999Z'))).to.equal('2026-01');
    expect(monthOf(at('2026-02-01T00:00:00.000Z'))).to.equal('2026-02');
    expect(monthOf(at('2026-01-31T23:59:59.999Z'))).to.equal('2026-01');
    expect(monthOf(at('2026-01-01T00:00:00.000Z'))).to.equal('2026-01');
    expect(monthOf(at('2025-12-31T23:59:59.999Z'))).to.equal('2025-12');
    expect(monthOf(at('2026-03-01T00:00:00.000Z') - 1)).to.equal('2026-02');
    expect(monthOf(at('2026-12-31T23:59:59.999Z'))).to.equal('2026-12');
    expect(monthOf(at('2027-01-01T00:00:00.000Z'))).to.equal('2027-01');
  });

  it("prices a model from the owner's table first, then the list prices, and a changed table at once", () => {
    const own: Record<string, Price> = { 'gpt-4o-mini': { input: 1, output: 2 } };
    expect(priceOf('gpt-4o-mini', own)).to.deep.equal({ input: 1, output: 2 });
    expect(priceOf('openai/gpt-4o-mini-2024-07-18', own)).to.deep.equal({ input: 1, output: 2 });
    expect(priceOf('gpt-4o', own)).to.deep.equal({ input: 2.5, cachedInput: 1.25, output: 10 });
    expect(priceOf('house-model', own)).to.equal(undefined);
    expect(priceOf('house-model', own), 'asked again').to.equal(undefined);
    // config.json changed (a reload makes a new table): its prices count from the next turn.
    const changed: Record<string, Price> = { 'house-model': { input: 0.5, output: 0.5 } };
    expect(priceOf('house-model', changed)).to.deep.equal({ input: 0.5, output: 0.5 });
    expect(priceOf('gpt-4o-mini', changed)).to.deep.equal({ input: 0.15, cachedInput: 0.075, output: 0.6 });
    expect(priceOf('house-model-2025-01-01', changed)).to.deep.equal({ input: 0.5, output: 0.5 });
    expect(priceOf('house-model-x', changed)).to.equal(undefined);
  });
});
