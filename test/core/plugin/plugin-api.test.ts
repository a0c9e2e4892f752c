import { expect } from 'chai';
import * as entry from '../../../core/index.js';
import { CodedError, definePlugin, defineTool, PluginError, Type } from '../../../core/index.js';
import { MediaRefused, pinFormat } from '../../../core/services/media/index.js';
import { lastText, type ModelRequest } from '../../../app/testing/fake-model.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

/** The plugin API as an author meets it: typed tool arguments checked by the core, needs and missing per handler. */
describe('plugin API: tool parameters and per-handler needs', () => {
  let bot: TestBot | undefined;
  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
  });

  describe('tool parameters (TypeBox) are checked before the tool runs', () => {
    const runs: unknown[] = [];
    const dice = definePlugin({
      name: 'dice',
      description: 'Rolls dice for the model',
      setup: () => ({
        tools: [
          defineTool({
            name: 'roll_dice',
            description: 'Roll dice',
            parameters: Type.Object({ sides: Type.Integer({ minimum: 2, maximum: 100, default: 6 }), label: Type.Optional(Type.String()) }, { additionalProperties: false }),
            effects: { outsideText: false, acts: 'nothing' },
            run: (args) => {
              runs.push(args);
              // Typed: `sides` is a number here (the default filled in when the model left it out).
              return `rolled a d${args.sides.toFixed(0)}`;
            },
          }),
        ],
      }),
    });
    /** The model calls roll_dice with `args` once, then repeats what the tool said. */
    const callingWith = (args: Record<string, unknown>) => (request: ModelRequest) =>
      request.messages.at(-1)?.role === 'tool' ? `tool said: ${lastText(request)}` : { tool: 'roll_dice', args };

    it('runs the tool with arguments that fit, defaults filled in', async () => {
      runs.length = 0;
      bot = await startTestBot(dice, { model: callingWith({}) });
      expect(await bot.send('roll for me')).to.deep.equal(['tool said: rolled a d6']);
      expect(runs).to.deep.equal([{ sides: 6 }]);
    });

    it('tells the model what does not fit, naming each field, and never runs the tool', async () => {
      runs.length = 0;
      bot = await startTestBot(dice, { model: callingWith({ sides: 'twenty', label: 7 }) });
      const [answer] = await bot.send('roll a d-twenty');
      expect(answer).to.match(/^tool said: Error: roll_dice was not run: its arguments do not fit its parameters \(/);
      expect(answer).to.include('sides: must be integer').and.include('label: must be string');
      expect(answer).to.include('Call it again with arguments that match');
      await bot.stop();
      bot = await startTestBot(dice, { model: callingWith({ sides: 1000 }) });
      expect((await bot.send('roll a d1000'))[0]).to.include('(sides: must be <= 100)');
      expect(runs).to.deep.equal([]);
    });

    it('drops arguments a closed schema does not name (the chat is the core\'s binding, not an argument)', async () => {
      runs.length = 0;
      bot = await startTestBot(dice, { model: callingWith({ sides: 20, chatId: 'other@s.whatsapp.net' }) });
      expect(await bot.send('roll')).to.deep.equal(['tool said: rolled a d20']);
      expect(runs).to.deep.equal([{ sides: 20 }]);
    });
  });

  describe('needs and missing per handler', () => {
    let cupOk = true;
    const cup = definePlugin({
      name: 'cup',
      description: 'Shakes a dice cup, when there is one',
      provides: [{ name: 'dicecup', detect: () => true, live: () => (cupOk ? { ok: true, detail: 'on the table' } : { ok: false, detail: 'the cup fell off the table' }), missing: 'no dice cup' }],
      setup: () => ({
        commands: [
          { command: 'shake', needs: ['dicecup'], missing: () => 'Shaking needs the dice cup, which is not here right now.', run: (ctx) => ctx.reply('shaken') },
          { command: 'count', needs: ['dicecup'], run: (ctx) => ctx.reply('counted') },
          { command: 'peek', run: (ctx) => ctx.reply('two dice') },
        ],
      }),
    });

    it('runs a handler while its needs are met; says its own missing sentence (or the plugin\'s default) while not, and the plugin\'s other handlers go on', async () => {
      cupOk = true;
      bot = await startTestBot(cup);
      expect(await bot.send('.shake')).to.deep.equal(['shaken']);
      cupOk = false;
      expect(await bot.send('.shake')).to.deep.equal(['Shaking needs the dice cup, which is not here right now.']);
      expect(await bot.send('.count')).to.deep.equal(['cup is unavailable right now: dicecup (the cup fell off the table).']);
      expect(await bot.send('.peek')).to.deep.equal(['two dice']);
      cupOk = true;
      expect(await bot.send('.shake')).to.deep.equal(['shaken']);
    });

    it('refuses a handler that needs an unknown capability at start (PLUGIN_UNKNOWN_NEED), and the bot stays up', async () => {
      const typo = definePlugin({ name: 'typo', description: 'needs a capability that does not exist', setup: () => ({ commands: [{ command: 'x', needs: ['dicecop'], run: (ctx) => ctx.reply('x') }] }) });
      bot = await startTestBot(typo);
      const state = bot.app.bot.plugins().find((s) => s.plugin.name === 'typo')!;
      expect(state.refused?.code).to.equal('PLUGIN_UNKNOWN_NEED');
      expect(state.refused?.message).to.include('"dicecop"');
      expect(await bot.send('.x')).to.not.deep.equal(['x']);
    });

    it('refuses a handler whose needs are not a list of names (PLUGIN_BAD_DEFINITION)', async () => {
      const bad = definePlugin({ name: 'bad', description: 'needs given as one string', setup: () => ({ commands: [{ command: 'x', needs: 'audio' as unknown as string[], run: (ctx) => ctx.reply('x') }] }) });
      bot = await startTestBot(bad);
      const state = bot.app.bot.plugins().find((s) => s.plugin.name === 'bad')!;
      expect(state.refused?.code).to.equal('PLUGIN_BAD_DEFINITION');
      expect(state.refused?.message).to.include('commands[0]: needs must be a list of capability names');
    });
  });

  describe('errors a plugin can catch are coded', () => {
    it('a setup that throws is refused as PLUGIN_SETUP_FAILED, naming the cause and the fix; the bot stays up', async () => {
      const broken = definePlugin({
        name: 'broken',
        description: 'cannot start',
        setup: () => {
          throw new Error('the dice folder is missing');
        },
      });
      bot = await startTestBot(broken);
      const state = bot.app.bot.plugins().find((s) => s.plugin.name === 'broken')!;
      expect(state.refused).to.be.instanceOf(PluginError).and.instanceOf(CodedError);
      expect(state.refused?.code).to.equal('PLUGIN_SETUP_FAILED');
      expect(state.refused?.message).to.equal(
        'PLUGIN_SETUP_FAILED: plugin "broken" failed in setup(host): the dice folder is missing; it stays off until the bot restarts — fix what that names (a setting, a file, a program the plugin needs), or turn the plugin off in the dashboard',
      );
      expect(bot.app.pluginFailures.map((f) => f.source)).to.include('plugin broken');
      expect(await bot.send('hello')).to.deep.equal(['model: hello']);
    });

    it('every error class the plugin entry offers has its own PLUGIN_ code', () => {
      const classes = (Object.entries(entry) as Array<[string, unknown]>).filter((pair): pair is [string, { prototype: object }] => typeof pair[1] === 'function' && pair[1].prototype instanceof Error && pair[1] !== PluginError && pair[1] !== CodedError);
      expect(classes.length).to.be.greaterThan(5);
      const codes = classes.map(([name, value]) => {
        expect(value.prototype, name).to.be.instanceOf(CodedError);
        const code = (value.prototype as { code: unknown }).code;
        expect(code, name).to.match(/^PLUGIN_[A-Z_]+$/);
        return code;
      });
      expect(new Set(codes).size, 'codes are distinct').to.equal(codes.length);
    });

    it('a refusal met for real carries its code: a playlist given as a voice note is PLUGIN_MEDIA_REFUSED', async () => {
      const error = await pinFormat(Buffer.from('#EXTM3U\n#EXTINF:1,\nfile:///etc/passwd\n'), 'sound').then(() => undefined, (err: unknown) => err);
      expect(error).to.be.instanceOf(MediaRefused);
      expect((error as CodedError).code).to.equal('PLUGIN_MEDIA_REFUSED');
    });
  });
});
