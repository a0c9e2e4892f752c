import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import type { App } from '../../../app/app.js';
import type { WhatsAppTransport } from '../../../core/adapters/whatsapp/whatsapp-transport.js';
import accessPlugin from '../../../plugins/access/index.js';
import pingPlugin from '../../../plugins/ping/index.js';
import { BOT_ME, BOT_PHONE, FakeBaileysSocket, FakeSocketFactory, GROUP, waText } from '../../fakes/baileys-socket.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { startLinkedBot } from '../../helpers/linked-bot.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { FAST_SENDING, UNPACED_ANSWERS } from '../../helpers/chat.js';

const ALICE = '6281211110000@s.whatsapp.net';
const BOB = '6281233330000@s.whatsapp.net';
const OWNER = '6281299990000';

describe('read receipts and "online" while typing over WhatsApp (the real bot, fake socket, real Baileys proto)', function () {
  this.timeout(30_000);
  let dir: string;
  let app: App;
  let transport: WhatsAppTransport;
  let sockets: FakeSocketFactory;
  let gw: FakeGateway;
  let socket: FakeBaileysSocket;

  /**
   * The bot on `config`. Each message is its own turn at once unless the config says otherwise (no 1.5 s burst window
   * waited out per message; the burst test sets WhatsApp's default back), and nothing it sends waits on pacing.
   */
  async function start(config: Record<string, unknown>): Promise<void> {
    dir = await tempDir('wabot-wa-receipts-');
    await writeConfig(dir, { targetUserIds: [BOT_PHONE], conversation: { debounceMs: 0 }, sending: FAST_SENDING, ...config });
    gw = await FakeGateway.start('model');
    ({ app, transport, sockets } = await startLinkedBot({ dir, env: { API_KEY: 'test-key-123456', BASE_URL: gw.url, MODEL: 'test-model' }, plugins: [pingPlugin, accessPlugin], answerPacing: UNPACED_ANSWERS }));
    socket = sockets.last;
  }

  /** Delivers one message as WhatsApp does and waits until the bot has finished with it; returns its key. */
  async function deliver(...args: Parameters<typeof waText>): Promise<ReturnType<typeof waText>['key']> {
    const raw = waText(...args);
    socket.deliver([raw]);
    await transport.idle();
    await app.bot.idle();
    await transport.idle();
    return raw.key;
  }

  /** The bot drops "typing…" beside sending its answer, not before: waits (event-loop turns, no clock) for it. */
  async function typingEnded(): Promise<void> {
    for (let turn = 0; turn < 10_000 && !socket.presences.some((p) => p.type === 'paused'); turn++) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  }

  const readIds = () => socket.reads.flat().map((k) => k.id);
  const answered = (text: string) => socket.sent.some((s) => ((s.content as { text?: string }).text ?? '').includes(text));

  afterEach(async () => {
    await app.stop();
    await gw.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reads (blue ticks, with the key the message came under) what an allowed sender writes, and nothing of a blocked sender', async () => {
    await start({ access: { mode: 'everyone', allow: [], block: [BOB.split('@')[0]] } });
    const key = await deliver('hello there', { from: ALICE });
    expect(answered('model: hello there')).to.equal(true);
    expect(socket.reads).to.have.length(1);
    expect(socket.reads[0]).to.have.length(1);
    expect(socket.reads[0]![0]).to.deep.include({ remoteJid: ALICE, id: key.id, fromMe: false });

    const blocked = await deliver('let me in', { from: BOB });
    expect(gw.chats()).to.have.length(1);
    expect(readIds()).to.deep.equal([key.id]).and.not.include(blocked.id);
  });

  it('reads every line of a burst answered as one turn, not only the last', async () => {
    // WhatsApp's own burst window (conversation.debounceMs unset).
    await start({ conversation: {} });
    const lines = [waText('hi', { from: ALICE }), waText('one question', { from: ALICE }), waText('about rice', { from: ALICE })];
    socket.deliver(lines);
    await transport.idle();
    await app.bot.idle();
    await transport.idle();
    expect(gw.chats(), 'the three lines were one turn').to.have.length(1);
    expect(readIds()).to.have.members(lines.map((l) => l.key.id));
    expect(socket.reads.flat().every((k) => k.remoteJid === ALICE && !k.fromMe)).to.equal(true);
  });

  it("never reads a held stranger's message in pairing mode, only once the bot answers them after approval", async () => {
    await start({ access: { mode: 'pairing', allow: [], block: [] }, owners: [OWNER] });
    const held = await deliver('what is the secret?', { from: ALICE });
    const code = /pairing code is ([A-Z0-9]+)/.exec(socket.sent.map((s) => (s.content as { text?: string }).text ?? '').join('\n'))![1];
    expect(readIds()).to.not.include(held.id);
    const approve = await deliver(`.approve ${code}`, { from: `${OWNER}@s.whatsapp.net` });
    expect(readIds()).to.include(approve.id);
    const after = await deliver('thanks', { from: ALICE });
    expect(readIds()).to.include(after.id);
  });

  it('in a group reads only what is meant for the bot (a mention), not the talk it ignores', async () => {
    await start({});
    const chatter = await deliver('lunch at noon?', { chat: GROUP, from: ALICE });
    const mention = await deliver(`@${BOT_PHONE} what is 2+2?`, { chat: GROUP, from: BOB, mentions: [BOT_ME.id] });
    expect(answered('2+2')).to.equal(true);
    expect(readIds()).to.deep.equal([mention.id]);
    expect(readIds()).to.not.include(chatter.id);
    expect(socket.reads[0]![0]).to.deep.include({ remoteJid: GROUP, participant: BOB });
  });

  it('with whatsapp.readReceipts false reads nothing, and still answers', async () => {
    await start({ whatsapp: { readReceipts: false, presence: true } });
    await deliver('hello there', { from: ALICE });
    expect(answered('model: hello there')).to.equal(true);
    expect(socket.reads).to.deep.equal([]);
  });

  it('shows itself online before "typing…" and offline again after the answer (whatsapp.presence on by default)', async () => {
    await start({});
    await deliver('hello there', { from: ALICE });
    expect(answered('model: hello there')).to.equal(true);
    await typingEnded();
    expect(socket.presences).to.deep.equal([
      { type: 'available', jid: undefined },
      { type: 'composing', jid: ALICE },
      { type: 'paused', jid: ALICE },
      { type: 'unavailable', jid: undefined },
    ]);
  });

  it('with whatsapp.presence false only types, never shows itself online', async () => {
    await start({ whatsapp: { readReceipts: true, presence: false } });
    await deliver('hello there', { from: ALICE });
    expect(answered('model: hello there')).to.equal(true);
    await typingEnded();
    expect(socket.presences).to.deep.equal([
      { type: 'composing', jid: ALICE },
      { type: 'paused', jid: ALICE },
    ]);
  });
});
