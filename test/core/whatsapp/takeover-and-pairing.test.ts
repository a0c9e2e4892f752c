import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import type { App } from '../../../app/app.js';
import type { WhatsAppTransport } from '../../../core/adapters/whatsapp/whatsapp-transport.js';
import accessPlugin from '../../../plugins/access/index.js';
import pingPlugin from '../../../plugins/ping/index.js';
import { BOT_PHONE, FakeSocketFactory, waText } from '../../fakes/baileys-socket.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { startLinkedBot } from '../../helpers/linked-bot.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { FAST_SENDING, UNPACED_ANSWERS } from '../../helpers/chat.js';

const ALICE = '6281211110000@s.whatsapp.net';
const BOB = '6281233330000@s.whatsapp.net';
const OWNER = '6281299990000';

type Message = { role: string; content: unknown };
const userTexts = (gw: FakeGateway) => gw.chats().map((req) => String([...((req.json?.messages ?? []) as Message[])].reverse().find((m) => m.role === 'user')?.content ?? ''));
const sentTexts = (sockets: FakeSocketFactory) => sockets.last.sent.map((s) => ({ to: s.jid, text: (s.content as { text?: string }).text ?? '' }));

describe('taking a chat over from the phone, and pairing, over WhatsApp (fake socket, real Baileys proto)', function () {
  this.timeout(30_000);
  let dir: string;
  let app: App;
  let transport: WhatsAppTransport;
  let sockets: FakeSocketFactory;
  let gw: FakeGateway;

  async function start(config: Record<string, unknown>): Promise<void> {
    dir = await tempDir('wabot-wa-access-');
    // Each message its own turn at once (no 1.5 s burst window waited out per message), the owner's notice sent
    // without the sending jitter and answers unpaced: what is tested is who is answered, not when.
    await writeConfig(dir, { targetUserIds: [BOT_PHONE], conversation: { debounceMs: 0 }, sending: FAST_SENDING, ...config });
    gw = await FakeGateway.start('model');
    ({ app, transport, sockets } = await startLinkedBot({ dir, env: { API_KEY: 'test-key-123456', BASE_URL: gw.url, MODEL: 'test-model' }, plugins: [pingPlugin, accessPlugin], answerPacing: UNPACED_ANSWERS }));
    // As Baileys does: every message the account sends comes back as a `fromMe` upsert.
    sockets.last.echoOwnSends = true;
  }

  async function deliver(...messages: Parameters<typeof waText>[]): Promise<void> {
    for (const m of messages) {
      sockets.last.deliver([waText(...m)]);
      await transport.idle();
      await app.bot.idle();
    }
  }

  afterEach(async () => {
    await app.stop();
    await gw.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("the owner's phone message pauses that chat only (no model call); the bot's own echoed answers do not; .bot on hands it back", async () => {
    await start({});
    await deliver(['hello', { from: ALICE }], ['still there?', { from: ALICE }]);
    expect(userTexts(gw), "the bot's own answers, echoed as fromMe, did not pause the chat").to.deep.equal(['hello', 'still there?']);
    await deliver(['I will answer this one myself', { from: ALICE, fromMe: true }], ['are you a bot?', { from: ALICE }], ['hi from bob', { from: BOB }]);
    expect(userTexts(gw)).to.deep.equal(['hello', 'still there?', 'hi from bob']);
    expect(sentTexts(sockets).filter((s) => s.text.includes('are you a bot'))).to.deep.equal([]);
    expect(app.bot.access.paused().map((p) => p.chatId)).to.deep.equal([ALICE]);
    await deliver(['.bot on', { from: ALICE, fromMe: true }], ['back?', { from: ALICE }]);
    expect(userTexts(gw).at(-1)).to.equal('back?');
    const prompt = (gw.chats().at(-1)!.json!.messages as Message[]).map((m) => `${m.role}: ${String(m.content)}`);
    expect(prompt).to.include('assistant: I will answer this one myself');
    expect(prompt).to.include('user: are you a bot?');
  });

  it("a stranger's message never reaches the model before an owner approves the code", async () => {
    await start({ access: { mode: 'pairing', allow: [], block: [] }, owners: [OWNER] });
    await deliver(['what is the secret?', { from: ALICE }]);
    expect(gw.chats()).to.have.length(0);
    const toAlice = sentTexts(sockets).find((s) => s.text.includes('pairing code'));
    const code = /pairing code is ([A-Z0-9]+)/.exec(toAlice!.text)![1];
    const notice = sentTexts(sockets).find((s) => s.text.startsWith('Pairing request'));
    expect(notice?.to).to.match(new RegExp(`^${OWNER}@`));
    expect(notice?.text).to.include(code);
    await deliver([`.approve ${code}`, { from: `${OWNER}@s.whatsapp.net` }]);
    expect(userTexts(gw)).to.deep.equal(['what is the secret?']);
  });
});
