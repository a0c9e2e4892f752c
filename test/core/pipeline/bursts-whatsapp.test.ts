import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import type { App } from '../../../app/app.js';
import { createLogger } from '../../../core/services/log/logger.js';
import type { WhatsAppTransport } from '../../../core/adapters/whatsapp/whatsapp-transport.js';
import pingPlugin from '../../../plugins/ping/index.js';
import { BOT_PHONE, FakeSocketFactory, waText } from '../../fakes/baileys-socket.js';
import { FakeGateway, lastUserText } from '../../fakes/openai-gateway.js';
import { startLinkedBot } from '../../helpers/linked-bot.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';

const ALICE = '6281211110000@s.whatsapp.net';

describe('bursts over WhatsApp (fake Baileys socket, real app, default window)', () => {
  let dir: string;
  let app: App;
  let transport: WhatsAppTransport;
  let sockets: FakeSocketFactory;
  let gateway: FakeGateway;

  beforeEach(async () => {
    gateway = await FakeGateway.start('gw');
    dir = await tempDir('wabot-burst-');
    // conversation.debounceMs unset: the WhatsApp transport's own 1.5 s applies.
    await writeConfig(dir, { targetUserIds: [BOT_PHONE], access: { mode: 'everyone', allow: [], block: [] } });
    const logger = createLogger({ level: 'warn', pretty: false, destination: new PassThrough() });
    ({ app, transport, sockets } = await startLinkedBot({ dir, env: { API_KEY: 'test-key-123456', BASE_URL: `${gateway.url}/v1`, MODEL: 'test-model' }, plugins: [pingPlugin], logger }));
  });

  afterEach(async () => {
    await app.stop();
    await gateway.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers three quick messages of one person with one model call and one WhatsApp message', async () => {
    for (const text of ['hi', 'quick question', 'the invoice from May?']) sockets.last.deliver([waText(text, { from: ALICE })]);
    await transport.idle();
    await app.bot.idle();
    expect(gateway.chats().map(lastUserText)).to.deep.equal(['hi\nquick question\nthe invoice from May?']);
    const sent = sockets.last.sent.filter((s) => (s.content as { text?: string }).text !== undefined);
    expect(sent).to.have.length(1);
    expect(sent[0].jid).to.equal(ALICE);
    expect((sent[0].content as { text: string }).text).to.equal('gw: hi\nquick question\nthe invoice from May?');
  });

  it('answers a command at once, after the burst before it', async () => {
    sockets.last.deliver([waText('hello', { from: ALICE })]);
    sockets.last.deliver([waText('.ping', { from: ALICE })]);
    await transport.idle();
    await app.bot.idle();
    const texts = sockets.last.sent.map((s) => (s.content as { text?: string }).text).filter(Boolean);
    expect(texts[0]).to.equal('gw: hello');
    expect(texts[1]).to.match(/^pong/);
  });
});
