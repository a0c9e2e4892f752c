import { expect } from 'chai';
import { definePlugin, type CommandContext } from '../../../core/index.js';
import type { Plugin } from '../../../core/kernel/plugin/spec.js';
import pingPlugin from '../../../plugins/ping/index.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const OWNER = '62811111111';
const BOT_PHONE = '62899999999';
const BOT_LID = '123456789012345';

function recorder(order: string[]): Plugin[] {
  return [
    definePlugin({
      name: 'boom',
      description: 'throws',
      order: 10,
      setup: () => ({
        commands: [{ command: 'boom', run: () => {
          throw new Error('kaboom');
        } }],
      }),
    }),
    definePlugin({
      name: 'watcher',
      description: 'observer',
      setup: () => ({
        observers: [(ctx) => {
          order.push(`watch:${ctx.message.text}`);
        }],
      }),
    }),
    definePlugin({
      name: 'echo',
      description: 'echo',
      setup: () => ({
        commands: [{ command: 'echo', help: 'repeat', run: async (ctx) => {
          order.push(`echo:${ctx.args}`);
          await ctx.reply(`echo ${ctx.args}`);
        } }],
      }),
    }),
    definePlugin({
      name: 'secret',
      description: 'owners only',
      setup: () => ({ commands: [{ command: 'secret', run: (ctx) => ctx.reply('the secret') }] }),
    }),
    // Owns the "teleport" capability, which it never finds: needy's handler must say its missing text instead.
    definePlugin({
      name: 'teleporter',
      description: 'provides a capability it never detects',
      provides: [{ name: 'teleport', detect: () => false, missing: 'no teleporter is configured' }],
      setup: () => ({}),
    }),
    definePlugin({
      name: 'needy',
      description: 'needs a capability nobody has',
      needs: ['teleport'],
      missing: 'I cannot teleport: no teleporter is configured.',
      setup: () => ({ commands: [{ command: 'beam', run: (ctx) => ctx.reply('beamed') }] }),
    }),
    definePlugin({
      name: 'shout',
      description: 'answers texts in capitals',
      setup: () => ({
        predicates: [{ when: (ctx) => /^[A-Z !]{4,}$/.test(ctx.text), usage: '(TEXT IN CAPITALS)', help: 'I answer shouting with calm', run: (ctx) => ctx.reply('calm down') }],
      }),
    }),
    pingPlugin,
  ];
}

describe('core pipeline', () => {
  let t: TestBot;
  const order: string[] = [];

  beforeEach(async () => {
    order.length = 0;
    t = await startTestBot(recorder(order), {
      // No chat model anywhere: commands must not need one.
      env: { BASE_URL: 'http://127.0.0.1:9' },
      config: { owners: [OWNER], targetUserIds: [BOT_PHONE, BOT_LID], plugins: { secret: { access: 'owners' } } },
    });
  });
  afterEach(() => t.stop());

  it('answers .ping with pong while no upstream is reachable', async () => {
    const actions = await t.transport.push({ text: '.ping' });
    expect(actions).to.have.length(1);
    expect((actions[0] as { text: string }).text).to.match(/^pong \(\d+ ms\)$/);
  });

  it('runs observers before the command handler, for every message', async () => {
    await t.transport.push({ text: '.echo hi' });
    expect(order).to.deep.equal(['watch:.echo hi', 'echo:hi']);
  });

  it('keeps the bot up when a plugin throws: short reply to the user, stack in the log', async () => {
    const actions = await t.transport.push({ text: '.boom' });
    expect(actions).to.have.length(1);
    const text = (actions[0] as { text: string }).text;
    expect(text).to.match(/boom ran into an error/);
    expect(text).not.to.include('kaboom');
    const logged = t.logs().find((l) => l.msg === 'plugin failed while handling a message');
    expect(logged?.err?.stack).to.include('kaboom');
    const after = await t.transport.push({ text: '.ping' });
    expect((after[0] as { text: string }).text).to.match(/^pong/);
  });

  it('answers an unknown command with a pointer to .help', async () => {
    const actions = await t.transport.push({ text: '.nope' });
    expect((actions[0] as { text: string }).text).to.equal('Unknown command .nope. Try .help for the list of commands.');
  });

  it('.help lists enabled commands with their help text', async () => {
    const [help] = (await t.transport.push({ text: '.help' })) as Array<{ text: string }>;
    expect(help.text).to.include('.echo: repeat');
    expect(help.text).to.include('.ping');
    expect(help.text).not.to.include('.secret');
    expect(help.text).to.include('(TEXT IN CAPITALS): I answer shouting with calm');
    await t.transport.push({ text: 'HELLO THERE' });
    expect(t.transport.texts().at(-1)).to.equal('calm down');
  });

  it('ignores empty and binary messages without a reply or an error', async () => {
    expect(await t.transport.push({ text: '' })).to.deep.equal([]);
    expect(await t.transport.push({ text: '   ' })).to.deep.equal([]);
    expect(await t.transport.push({ text: '\u0000\u0001\u0002binary\u0003' })).to.deep.equal([]);
    expect(t.logs().filter((l) => l.level >= 50)).to.deep.equal([]);
  });

  it('stops matching a disabled plugin at once when the config changes', async () => {
    expect(t.transport.texts()).to.deep.equal([]);
    await t.transport.push({ text: '.echo a' });
    const config = { ...t.app.config, plugins: { ...t.app.config.plugins, echo: { enabled: false } } };
    t.app.bot.setConfig(config);
    const actions = await t.transport.push({ text: '.echo b' });
    expect((actions[0] as { text: string }).text).to.match(/^\.echo is turned off: the owner switched off echo/);
    expect(order.filter((o) => o.startsWith('echo:'))).to.deep.equal(['echo:a']);
  });

  it('enforces per-plugin access: owners only', async () => {
    const denied = await t.transport.push({ text: '.secret', senderId: '62822222222@s.whatsapp.net' });
    expect((denied[0] as { text: string }).text).to.equal('Sorry, you are not allowed to use .secret here.');
    const allowed = await t.transport.push({ text: '.secret', senderId: `${OWNER}@s.whatsapp.net` });
    expect((allowed[0] as { text: string }).text).to.equal('the secret');
  });

  it('an owner writing under their LID is recognised through the alternative id', async () => {
    const allowed = await t.transport.push({ text: '.secret', senderId: '99887766554433@lid', senderAltId: `${OWNER}@s.whatsapp.net` });
    expect((allowed[0] as { text: string }).text).to.equal('the secret');
  });

  it('replies with the plugin\'s fail-loud text when a capability is missing', async () => {
    const actions = await t.transport.push({ text: '.beam' });
    expect((actions[0] as { text: string }).text).to.equal('I cannot teleport: no teleporter is configured.');
  });

  describe('groups', () => {
    const group = '120363000000000001@g.us';
    const member = '62833333333@s.whatsapp.net';

    it('ignores messages that neither mention nor reply to the bot', async () => {
      expect(await t.transport.push({ chatId: group, senderId: member, text: '.echo x' })).to.deep.equal([]);
      expect(await t.transport.push({ chatId: group, senderId: member, text: 'hello all', mentions: ['62844444444@s.whatsapp.net'] })).to.deep.equal([]);
    });

    it('answers when the bot is mentioned by its phone jid', async () => {
      const actions = await t.transport.push({ chatId: group, senderId: member, text: `@${BOT_PHONE} .echo phone`, mentions: [`${BOT_PHONE}@s.whatsapp.net`] });
      expect((actions[0] as { text: string }).text).to.equal('echo phone');
    });

    it('answers when the bot is mentioned by its LID', async () => {
      const actions = await t.transport.push({ chatId: group, senderId: member, text: `@${BOT_LID} .echo lid`, mentions: [`${BOT_LID}@lid`] });
      expect((actions[0] as { text: string }).text).to.equal('echo lid');
    });

    it('answers a reply to one of the bot\'s messages', async () => {
      const actions = await t.transport.push({ chatId: group, senderId: member, text: '.echo reply', quoted: { id: 'x', senderId: `${BOT_LID}@lid`, text: 'earlier', fromBot: true } });
      expect((actions[0] as { text: string }).text).to.equal('echo reply');
    });

    it('answers when mentioned by an id the transport learnt at login (not in config)', async () => {
      const t2 = await startTestBot(recorder([]), { ownIds: ['555000111222@lid'] });
      try {
        const actions = await t2.transport.push({ chatId: group, senderId: member, text: '@555000111222 .ping', mentions: ['555000111222@lid'] });
        expect((actions[0] as { text: string }).text).to.match(/^pong/);
      } finally {
        await t2.stop();
      }
    });
  });

  describe('who the bot answers at all', () => {
    it('never answers a blocked sender', async () => {
      t.app.bot.setConfig({ ...t.app.config, access: { mode: 'everyone', allow: [], block: ['62855555555'] } });
      expect(await t.transport.push({ text: '.ping', senderId: '62855555555@s.whatsapp.net' })).to.deep.equal([]);
      expect(await t.transport.push({ text: '.ping', senderId: '62866666666@s.whatsapp.net' })).to.have.length(1);
    });

    it('in allowList mode answers only listed ids and owners', async () => {
      t.app.bot.setConfig({ ...t.app.config, access: { mode: 'allowList', allow: ['62877777777'], block: [] } });
      expect(await t.transport.push({ text: '.ping', senderId: '62866666666@s.whatsapp.net' })).to.deep.equal([]);
      expect(await t.transport.push({ text: '.ping', senderId: '62877777777@s.whatsapp.net' })).to.have.length(1);
      expect(await t.transport.push({ text: '.ping', senderId: `${OWNER}@s.whatsapp.net` })).to.have.length(1);
    });
  });

  it('handles messages of one chat in order even when the first is slow', async () => {
    const seen: string[] = [];
    let slowStarted!: () => void;
    const slowRunning = new Promise<void>((resolve) => (slowStarted = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const slow = definePlugin({
      name: 'slow',
      description: 'slow',
      setup: () => {
        const run = async (ctx: CommandContext) => {
          if (ctx.command.word === '.slow') {
            slowStarted();
            await released; // held until the test lets it go: '.fast' has had every chance to overtake it
          }
          seen.push(ctx.command.word);
        };
        return { commands: [{ command: 'slow', run }, { command: 'fast', run }] };
      },
    });
    const t2 = await startTestBot([slow]);
    try {
      const both = Promise.all([t2.transport.push({ text: '.slow' }), t2.transport.push({ text: '.fast' })]);
      await slowRunning;
      for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(seen, 'nothing overtakes the slow one').to.deep.equal([]);
      release();
      await both;
      expect(seen).to.deep.equal(['.slow', '.fast']);
    } finally {
      await t2.stop();
    }
  });
});
