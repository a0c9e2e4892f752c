import { expect } from 'chai';
import path from 'node:path';
import { closeDatabase, databaseFor } from '../../../core/services/store/database.js';
import { waMessage } from '../../fakes/baileys-socket.js';
import { cleanup, link, setup, type Harness } from './harness.js';

const ALICE = '6281211110000@s.whatsapp.net';
const ALICE_LID = '98765432100001@lid';
const WEEK = 7 * 24 * 3600;
const SECTION = 'WhatsApp chat addresses and disappearing timers';

/** Stops the transport and closes the data folder's database, as the process ending would. */
async function stopProcess(h: Harness): Promise<void> {
  await h.transport.stop();
  closeDatabase(path.join(h.dir, 'data'));
}

/** The rows of the adapter's chat routes, as the database file holds them. */
function storedRoutes(h: Harness): string {
  return databaseFor(path.join(h.dir, 'data'))
    .all<{ value: string }>('SELECT value FROM "doc:whatsapp:chat-routes"')
    .map((r) => r.value)
    .join('\n');
}

describe('WhatsApp: where a chat is answered and its disappearing timer survive a restart (fake socket, same data folder)', () => {
  afterEach(cleanup);

  it('after a restart, a chat that arrived on its phone jid (its LID known) is answered on the phone jid, with the timer it had', async () => {
    const first = await setup();
    await link(first);
    first.sockets.last.deliver([waMessage({ extendedTextMessage: { text: 'hi', contextInfo: { expiration: WEEK } } }, { from: ALICE, fromAlt: ALICE_LID })]);
    await first.transport.idle();
    await stopProcess(first);

    const second = await setup({ dir: first.dir });
    second.sockets.last.open();
    await second.transport.sendText(ALICE, 'the answer');
    const file = path.join(second.dir, 'note.ogg');
    await (await import('node:fs/promises')).writeFile(file, 'OggS');
    await second.transport.sendMedia(ALICE, { kind: 'voice', path: file });
    expect(second.sockets.last.sent.map((s) => s.jid)).to.deep.equal([ALICE, ALICE]);
    expect(second.sockets.last.sent.map((s) => s.options?.ephemeralExpiration)).to.deep.equal([WEEK, WEEK]);
  });

  it("a person's .mydata holds their chat's address and timer, and their delete leaves neither in the database", async () => {
    const h = await setup();
    await link(h);
    h.sockets.last.deliver([waMessage({ extendedTextMessage: { text: 'hi', contextInfo: { expiration: WEEK } } }, { from: ALICE, fromAlt: ALICE_LID })]);
    await h.transport.idle();
    await h.transport.stop();
    const participant = h.transport.declaredStores().participants().find((p) => p.name === SECTION)!;
    // The timer is noted under both of her ids (a message may name either).
    expect(await participant.exportFor([ALICE, ALICE_LID])).to.deep.equal({ [ALICE]: { arrivedOn: ALICE, timer: WEEK }, [ALICE_LID]: { timer: WEEK } });
    expect(storedRoutes(h)).to.include('6281211110000').and.include('98765432100001');
    expect(await participant.deleteFor([ALICE, ALICE_LID])).to.equal(2);
    expect(storedRoutes(h)).to.not.include('6281211110000').and.not.include('98765432100001');
    expect(await participant.exportFor([ALICE, ALICE_LID])).to.deep.equal({});
  });

  it("a chat's address and timer follow it when it moves to a new id", async () => {
    const h = await setup();
    await link(h);
    // Only the LID is known: the chat is kept under it.
    h.sockets.last.deliver([waMessage({ extendedTextMessage: { text: 'hi', contextInfo: { expiration: WEEK } } }, { from: ALICE_LID })]);
    await h.transport.idle();
    expect(h.received[0].chatId).to.equal(ALICE_LID);
    const participant = h.transport.declaredStores().participants().find((p) => p.name === SECTION)!;
    await participant.moveChat!(ALICE_LID, ALICE);
    await h.transport.sendText(ALICE, 'the answer');
    expect(h.sockets.last.sent[0]).to.deep.include({ jid: ALICE_LID });
    expect(h.sockets.last.sent[0].options?.ephemeralExpiration).to.equal(WEEK);
  });
});
