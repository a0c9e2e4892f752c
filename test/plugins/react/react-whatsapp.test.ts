import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import type { App } from '../../../app/app.js';
import { FakeModel, lastText, type ModelAnswer, type ModelRequest } from '../../../app/testing/index.js';
import type { WhatsAppTransport } from '../../../core/adapters/whatsapp/whatsapp-transport.js';
import { createLogger } from '../../../core/services/log/logger.js';
import react from '../../../plugins/react/index.js';
import { BOT_ME, BOT_PHONE, FakeSocketFactory, waText } from '../../fakes/baileys-socket.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { startLinkedBot } from '../../helpers/linked-bot.js';

const ANN = '6281100000001@s.whatsapp.net';
const GROUP = '120363000000000077@g.us';

/** "react <emoji>" makes the fake model call the react tool; after the tool it stays silent ("" sends nothing). */
function answer(request: ModelRequest): ModelAnswer {
  if (request.messages.at(-1)?.role === 'tool') return 'ok';
  const asked = /react (.+)$/.exec(lastText(request));
  return asked ? { tool: 'react', args: { emoji: asked[1] } } : `model: ${lastText(request)}`;
}

/**
 * The react tool over WhatsApp: the real transport on the fake Baileys socket, with real `proto` messages in. The
 * reaction must go out as WhatsApp's reactionMessage keyed to the very message being answered (its chat, id, sender
 * in a group), or the phone shows it nowhere.
 */
describe('react over WhatsApp (fake Baileys socket, real proto messages)', function () {
  this.timeout(30_000);
  let dir: string;
  let app: App;
  let transport: WhatsAppTransport;
  let sockets: FakeSocketFactory;
  let model: FakeModel;

  beforeEach(async () => {
    model = await FakeModel.start(answer);
    dir = await tempDir('wabot-react-');
    await writeConfig(dir, { targetUserIds: [BOT_PHONE], access: { mode: 'everyone', allow: [], block: [] }, groups: { policy: 'open' }, conversation: { debounceMs: 0 }, plugins: { react: { enabled: true } } });
    const logger = createLogger({ level: 'warn', pretty: false, destination: new PassThrough() });
    ({ app, transport, sockets } = await startLinkedBot({ dir, env: { API_KEY: 'test-key-123456', BASE_URL: model.url, MODEL: 'test-model' }, plugins: [react], logger }));
  });

  afterEach(async () => {
    await app.stop();
    await model.close();
    await rm(dir, { recursive: true, force: true });
  });

  const reactions = () => sockets.last.sent.filter((s) => 'react' in (s.content as object)).map((s) => ({ jid: s.jid, ...(s.content as { react: object }).react }));

  it('puts the emoji on the private message being answered, keyed to that message', async () => {
    sockets.last.deliver([waText('an earlier message', { from: ANN, id: 'ANN-EARLIER' })]);
    await transport.idle();
    await app.bot.idle();
    sockets.last.deliver([waText('thanks! react 👍', { from: ANN, id: 'ANN-THANKS' })]);
    await transport.idle();
    await app.bot.idle();
    expect(reactions()).to.have.length(1);
    const [placed] = reactions() as Array<{ jid: string; text: string; key: { remoteJid: string; id: string; fromMe: boolean } }>;
    expect(placed.jid).to.equal(ANN);
    expect(placed.text).to.equal('👍');
    expect({ remoteJid: placed.key.remoteJid, id: placed.key.id, fromMe: Boolean(placed.key.fromMe) }).to.deep.equal({ remoteJid: ANN, id: 'ANN-THANKS', fromMe: false });
  });

  it("in a group, keys the reaction to the sender's message (participant included)", async () => {
    sockets.last.deliver([waText(`@${BOT_PHONE} react 🎉`, { chat: GROUP, from: ANN, id: 'GRP-ANN-1', mentions: [BOT_ME.id.replace(/:\d+@/, '@')] })]);
    await transport.idle();
    await app.bot.idle();
    const placed = reactions() as Array<{ jid: string; text: string; key: { remoteJid: string; id: string; participant?: string } }>;
    expect(placed.map((p) => [p.jid, p.text, p.key.remoteJid, p.key.id, p.key.participant])).to.deep.equal([[GROUP, '🎉', GROUP, 'GRP-ANN-1', ANN]]);
  });
});
