import { expect } from 'chai';
import type { WhatsAppTransport } from '../../../core/adapters/whatsapp/whatsapp-transport.js';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sinon from 'sinon';
import type { GroupMetadata } from '@whiskeysockets/baileys';
import { SqlDoc } from '../../../core/services/store/sql-docs.js';
import { storedDocuments } from '../../helpers/disk-text.js';
import type { App } from '../../../app/app.js';
import { linkBot } from '../../../app/testing/whatsapp.js';
import pingPlugin from '../../../plugins/ping/index.js';
import { type FakeSocketFactory, GROUP, waText } from '../../fakes/baileys-socket.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { cleanup, link, setup, type Harness } from './harness.js';

const ALICE = '6281211110000@s.whatsapp.net';
const ALICE_LID = '98765432100001@lid';

describe('WhatsApp identity: one id per person and per private chat (fake socket, Baileys’ own LID store)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await setup();
    await link(h);
  });
  afterEach(cleanup);

  it('a LID-only sender is identified by phone through Baileys’ lid-mapping store of the session', async () => {
    // Baileys stores pairs it learns (usync, retries) in the session's lid-mapping keys without telling us.
    await h.sockets.last.signalRepository.lidMapping.storeLIDPNMappings([{ lid: ALICE_LID, pn: ALICE }]);
    h.sockets.last.deliver([waText('hi', { chat: GROUP, from: ALICE_LID })]);
    await h.transport.idle();
    expect(h.received.map((m) => [m.senderId, m.senderAltId])).to.deep.equal([[ALICE, ALICE_LID]]);
    await h.transport.stop();
    const links = (storedDocuments(path.join(h.dir, 'data'), 'whatsapp', 'identity-links')[''] ?? {}) as { lidToPhone?: Record<string, string> };
    expect(links.lidToPhone).to.include({ '98765432100001': '6281211110000' });
  });

  it('a private chat keeps one id whichever form it arrives in; the move is announced once, before the message that revealed it, and the adapter moves no file itself', async () => {
    await cleanup();
    const announced: Array<[string, string, number]> = [];
    /** Messages handed on by the time each move had finished (the stores take a few turns of the event loop). */
    const handedOnWhenMoved: number[] = [];
    h = await setup({
      events: {
        onChatIdChange: async (from, to) => {
          // The message that revealed the phone id is handed on only after the stores moved.
          announced.push([from, to, h.received.length]);
          for (let turn = 0; turn < 3; turn++) await new Promise((r) => setImmediate(r));
          handedOnWhenMoved.push(h.received.length);
        },
      },
    });
    await link(h);
    // First contact only by LID: the chat is known by its LID.
    h.sockets.last.deliver([waText('first', { from: ALICE_LID })]);
    await h.transport.idle();
    expect(h.received[0]).to.include({ chatId: ALICE_LID, senderId: ALICE_LID });
    await mkdir(path.join(h.dir, 'data', 'history'), { recursive: true });
    await writeFile(path.join(h.dir, 'data', 'history', `${ALICE_LID}.json`), JSON.stringify({ messages: [{ role: 'user', text: 'first', at: 1 }] }));

    // WhatsApp then reveals the phone number: from now on one id (the phone).
    h.sockets.last.deliver([waText('second', { from: ALICE_LID, fromAlt: ALICE })]);
    h.sockets.last.deliver([waText('third', { from: ALICE })]);
    h.sockets.last.deliver([waText('fourth', { from: ALICE_LID })]);
    await h.transport.idle();
    expect(h.received.slice(1).map((m) => [m.chatId, m.senderId, m.senderAltId])).to.deep.equal([
      [ALICE, ALICE, ALICE_LID],
      [ALICE, ALICE, ALICE_LID],
      [ALICE, ALICE, ALICE_LID],
    ]);
    expect(announced).to.deep.equal([[ALICE_LID, ALICE, 1]]);
    expect(handedOnWhenMoved, 'nothing handed on while the stores were moving').to.deep.equal([1]);
    // The stores move their own data (the core's privacy participants): the adapter renamed nothing.
    expect(existsSync(path.join(h.dir, 'data', 'history', `${ALICE_LID}.json`))).to.equal(true);
    expect(existsSync(path.join(h.dir, 'data', 'history', `${ALICE}.json`))).to.equal(false);
  });
});

describe('WhatsApp identity in access control (real bot, owners and lists written with phone numbers)', () => {
  let dir: string;
  let app: App;
  let sockets: FakeSocketFactory;
  let transport: WhatsAppTransport;

  async function start(access: Record<string, unknown>): Promise<void> {
    dir = await tempDir('wabot-wa-id-');
    await writeConfig(dir, { access });
    ({ app, sockets, transport } = await linkBot({ dir, env: { API_KEY: 'test-key-123456', BASE_URL: 'http://127.0.0.1:9', MODEL: 'test-model' }, plugins: [pingPlugin] }));
    await sockets.last.signalRepository.lidMapping.storeLIDPNMappings([{ lid: ALICE_LID, pn: ALICE }]);
  }

  async function pingFromLid(): Promise<number> {
    const before = sockets.last.sent.length;
    sockets.last.deliver([waText('.ping', { from: ALICE_LID })]);
    // Mapped, handled and answered (or left unanswered): the transport and the bot are idle.
    await transport.idle();
    await app.bot.idle();
    return sockets.last.sent.length - before;
  }

  afterEach(async () => {
    await app.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('allow list by phone: a LID-only message from that person is answered, on the LID it came in on', async () => {
    await start({ mode: 'allowList', allow: ['6281211110000'], block: [] });
    expect(await pingFromLid()).to.equal(1);
    expect(sockets.last.sent.at(-1)!.jid).to.equal(ALICE_LID);
  });

  it('block list by phone: a LID-only message from that person is not answered', async () => {
    await start({ mode: 'everyone', allow: [], block: ['6281211110000'] });
    expect(await pingFromLid()).to.equal(0);
  });
});

describe('WhatsApp identity links: learning many pairs at once (fake socket, real file)', () => {
  afterEach(cleanup);

  it('a big group’s members are learnt in one update of identity-links.json, in place: every pair, older pairs and other keys kept', async () => {
    const dir = await tempDir('wabot-wa-links-');
    await mkdir(path.join(dir, 'data', 'whatsapp'), { recursive: true });
    await writeFile(path.join(dir, 'data', 'whatsapp', 'identity-links.json'), JSON.stringify({ version: 1, lidToPhone: { '11110000000001': '6281200000009' }, note: 'kept' }));
    const h = await setup({ dir });
    await link(h);
    const updates = sinon.spy(SqlDoc.prototype, 'update');
    const members = Array.from({ length: 2000 }, (_, i) => ({ id: `${77770000000000 + i}@lid`, phoneNumber: `${6281300000000 + i}@s.whatsapp.net`, admin: null }));
    h.sockets.last.ev.emit('groups.upsert', [{ id: GROUP, subject: 'big group', addressingMode: 'lid', participants: members } as unknown as GroupMetadata]);
    // A member changed number: the newer pair wins.
    h.sockets.last.ev.emit('lid-mapping.update', { lid: '11110000000001@lid', pn: '6281200000010@s.whatsapp.net' });
    await h.transport.stop();
    const linkUpdates = updates.getCalls().filter((c) => String((c.thisValue as SqlDoc<unknown>).file).endsWith('identity-links.json'));
    // One burst (2,001 pairs learnt in one go), one update of the document.
    expect(linkUpdates).to.have.length(1);
    const saved = (storedDocuments(path.join(dir, 'data'), 'whatsapp', 'identity-links')[''] ?? {}) as { note?: string; lidToPhone: Record<string, string> };
    expect(saved.note).to.equal('kept');
    // The members, the older pair, and the bot's own pair (learnt at login).
    expect(Object.keys(saved.lidToPhone)).to.have.length(2002);
    expect(saved.lidToPhone).to.include({ '77770000000000': '6281300000000', '77770000001999': '6281300001999', '11110000000001': '6281200000010' });
  });
});
