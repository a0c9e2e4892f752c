import { expect } from 'chai';
import { definePlugin } from '../../../core/index.js';
import type { Plugin } from '../../../core/kernel/plugin/spec.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

type Observer = (ctx: { text: string }) => unknown;

/** Two observing plugins (in this order) and a command that notes when it runs: the log shows what ran, in order. */
function observing(log: string[], first: Observer[], second: Observer[]): Plugin[] {
  return [
    definePlugin({ name: 'first-observer', description: 'observes first', order: 10, setup: () => ({ observers: first }) }),
    definePlugin({ name: 'second-observer', description: 'observes second', order: 20, setup: () => ({ observers: second }) }),
    definePlugin({
      name: 'noted',
      description: 'a command that notes when it runs',
      order: 30,
      setup: () => ({ commands: [{ command: 'note', run: (ctx) => (log.push('handler'), ctx.reply('noted')) }] }),
    }),
  ];
}

/** Resolves after a few turns of the microtask queue: an observer that is still busy when it returns. */
const later = () => Promise.resolve().then(() => undefined).then(() => undefined);

describe('observers: each waited for in turn, one failing never stops the others or the reply', () => {
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  it('an observer still busy when it returns is waited for before the next observer and before the handler', async () => {
    const log: string[] = [];
    t = await startTestBot(
      observing(
        log,
        [async (ctx) => (await later(), log.push(`1a ${ctx.text}`)), (ctx) => log.push(`1b ${ctx.text}`), async () => (await later(), log.push('1c'))],
        [(ctx) => log.push(`2a ${ctx.text}`)],
      ),
    );
    expect(await t.send('.note')).to.deep.equal(['noted']);
    expect(log).to.deep.equal(['1a .note', '1b .note', '1c', '2a .note', 'handler']);
  });

  it("an observer that throws, at once or later, stops its plugin's later observers only: the next plugin's still run and the message is answered", async () => {
    for (const failing of [() => { throw new Error('observer broke at once'); }, async () => { await later(); throw new Error('observer broke later'); }]) {
      const log: string[] = [];
      t = await startTestBot(observing(log, [(ctx) => log.push(`1a ${ctx.text}`), failing, () => log.push('1c')], [async () => (await later(), log.push('2a')), () => log.push('2b')]));
      expect(await t.send('.note')).to.deep.equal(['noted']);
      expect(log).to.deep.equal(['1a .note', '2a', '2b', 'handler']);
      expect(t.logs().some((l) => l.msg === 'observer plugin failed' && l.plugin === 'first-observer')).to.equal(true);
      await t.stop();
      t = undefined;
    }
  });
});
