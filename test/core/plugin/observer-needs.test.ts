import { expect } from 'chai';
import { definePlugin } from '../../../core/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

/**
 * Observers declare their own needs like handlers and tools: the core withholds one whose need is missing (checked at
 * every message, so a capability that comes back starts it again), and the start log says what is off.
 */
describe('observer needs', () => {
  let bot: TestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  function archivist(state: { tape: boolean; plain: string[]; taped: string[] }) {
    return definePlugin({
      name: 'archivist',
      description: 'keeps every message, and tapes them when the tape works',
      provides: [{ name: 'tape', detect: () => ({ ok: state.tape, detail: state.tape ? 'tape loaded' : 'no tape in the recorder' }), missing: 'no tape' }],
      setup: (host) => {
        host.capabilities.setLive('tape', () => ({ ok: state.tape, detail: state.tape ? 'tape loaded' : 'no tape in the recorder' }), () => state.tape);
        return {
          observers: [(ctx) => void state.plain.push(ctx.text), { needs: ['tape'], missing: 'messages are not taped', run: (ctx) => void state.taped.push(ctx.text) }],
          commands: [{ command: 'count', run: (ctx) => ctx.reply(`${state.plain.length} kept, ${state.taped.length} taped`) }],
        };
      },
    });
  }

  it('an observer whose need is missing is not run, the start log says what is off, and it runs again once the need is back', async () => {
    const state = { tape: false, plain: [] as string[], taped: [] as string[] };
    bot = await startTestBot(archivist(state));
    const row = bot.logs().find((l) => l.plugin === 'archivist' && typeof l.state === 'string');
    expect(row).to.include({ state: 'degraded', reason: 'missing tape: messages are not taped' });
    expect(String(row?.msg)).to.equal('  off in part: plugin archivist: missing tape: messages are not taped');
    // The missing capability's own line names the plugin it costs.
    expect(bot.logs().find((l) => l.capability === 'tape')).to.deep.include({ ok: false, plugins: ['archivist'] });

    await bot.send('first');
    expect(state.plain).to.deep.equal(['first']);
    expect(state.taped).to.deep.equal([]);

    state.tape = true;
    await bot.send('second');
    expect(state.plain).to.deep.equal(['first', 'second']);
    expect(state.taped).to.deep.equal(['second']);

    state.tape = false;
    await bot.send('third');
    expect(state.taped).to.deep.equal(['second']);
    expect(await bot.send('.count')).to.deep.equal(['4 kept, 1 taped']);
  });

  it('with its need there, the plugin is simply active and the observer runs', async () => {
    const state = { tape: true, plain: [] as string[], taped: [] as string[] };
    bot = await startTestBot(archivist(state));
    expect(bot.logs().filter((l) => l.plugin === 'archivist' && l.state === 'degraded')).to.deep.equal([]);
    await bot.send('hello');
    expect(state.taped).to.deep.equal(['hello']);
  });

  it('an unknown need of an observer is refused at registration (PLUGIN_UNKNOWN_NEED), a malformed observer with PLUGIN_BAD_DEFINITION', async () => {
    const typo = definePlugin({ name: 'typo', description: 'an observer needing a misspelt capability', setup: () => ({ observers: [{ needs: ['audoi'], run: () => undefined }] }) });
    bot = await startTestBot(typo);
    const refused = bot.app.pluginFailures.map((f) => f.reason);
    expect(refused).to.have.length(1);
    expect(refused[0]).to.match(/^PLUGIN_UNKNOWN_NEED: plugin "typo" needs "audoi", but no capability of that name exists/);
    await bot.stop();

    const shapeless = definePlugin({ name: 'shapeless', description: 'an observer object without run', setup: () => ({ observers: [{ needs: ['chat'] } as never] }) });
    bot = await startTestBot(shapeless);
    expect(bot.app.pluginFailures.map((f) => f.reason)).to.deep.equal(['PLUGIN_BAD_DEFINITION: plugin "shapeless": observers[0] must be a function (ctx) => … or { needs, missing, run(ctx) }']);
  });
});
