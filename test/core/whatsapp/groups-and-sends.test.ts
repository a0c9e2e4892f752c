import { expect } from 'chai';
import { ACCOUNT_RESTRICTED_TEXT, proto, type GroupMetadata } from '@whiskeysockets/baileys';
import { GROUP, waMessage, waText } from '../../fakes/baileys-socket.js';
import { cleanup, fakeClockPerTest, link, setup, type Harness } from './harness.js';

const ALICE = '6281211110000@s.whatsapp.net';
const ALICE_LID = '98765432100001@lid';

function groupMeta(id: string, extra: Partial<GroupMetadata> = {}): GroupMetadata {
  return { id, subject: `group ${id}`, owner: undefined, addressingMode: 'lid', participants: [{ id: ALICE_LID, phoneNumber: ALICE, admin: null }], ...extra } as GroupMetadata;
}

describe('WhatsApp transport: group metadata cache (fake socket replaying Baileys events)', () => {
  let h: Harness;
  const clock = fakeClockPerTest();
  beforeEach(async () => {
    // Hours pass without frames here; the silent-session watchdog is not what these tests look at.
    h = await setup({ transport: { silentMs: 24 * 60 * 60_000 } });
    await link(h);
  });

  it('queries a group once and answers later sends (even concurrent ones) from the stored result', async () => {
    await Promise.all([h.transport.sendText(GROUP, 'one'), h.transport.sendText(GROUP, 'two')]);
    await h.transport.sendText(GROUP, 'three');
    expect(h.sockets.last.groupQueries).to.deep.equal([GROUP]);
    // Hours later the entry has expired and is fetched once more.
    await clock.tickAsync(7 * 60 * 60_000);
    await h.transport.sendText(GROUP, 'four');
    expect(h.sockets.last.groupQueries).to.deep.equal([GROUP, GROUP]);
  });

  it('a reaction to a group message it no longer holds names its author by LID, so WhatsApp finds the message', async () => {
    // Alice wrote privately on her LID with her phone beside it: the pair is known.
    h.sockets.last.deliver([waText('hi', { from: ALICE_LID, fromAlt: ALICE })]);
    await h.transport.idle();
    await h.transport.react(GROUP, 'OLD-GROUP-MSG', '👍', ALICE);
    const keyOf = () => (h.sockets.last.sent.at(-1)!.content as { react: { key: Record<string, unknown> } }).react.key;
    expect(keyOf()).to.include({ remoteJid: GROUP, id: 'OLD-GROUP-MSG', fromMe: false, participant: ALICE_LID });
    // In a private chat a key has no participant.
    await h.transport.react(ALICE, 'OLD-PRIVATE-MSG', '👍', ALICE);
    expect(keyOf()).to.include({ id: 'OLD-PRIVATE-MSG' }).and.not.have.property('participant');
  });

  it('stores the full metadata Baileys emits for every group when the list is dirty, without a query per group', async () => {
    const groups = Array.from({ length: 40 }, (_, i) => groupMeta(`1203630000000001${i.toString().padStart(2, '0')}@g.us`));
    h.sockets.last.ev.emit('groups.update', groups);
    await clock.tickAsync(0);
    for (const g of groups.slice(0, 5)) await h.transport.sendText(g.id, 'hi');
    expect(h.sockets.last.groupQueries).to.deep.equal([]);
    expect(await h.sockets.last.options.cachedGroupMetadata!(groups[7].id)).to.deep.include({ subject: groups[7].subject });
  });

  it('applies partial updates and participant changes to the cached entry instead of querying', async () => {
    h.sockets.last.ev.emit('groups.upsert', [groupMeta(GROUP)]);
    h.sockets.last.ev.emit('groups.update', [{ id: GROUP, subject: 'renamed', author: ALICE_LID }]);
    const BOB_LID = '11122233344455@lid';
    h.sockets.last.ev.emit('group-participants.update', { id: GROUP, author: ALICE_LID, participants: [{ id: BOB_LID, phoneNumber: '6281255550000@s.whatsapp.net' }], action: 'add' });
    h.sockets.last.ev.emit('group-participants.update', { id: GROUP, author: ALICE_LID, participants: [{ id: ALICE_LID, phoneNumber: ALICE }], action: 'remove' });
    await clock.tickAsync(0);
    const cached = (await h.sockets.last.options.cachedGroupMetadata!(GROUP))!;
    expect(cached.subject).to.equal('renamed');
    expect(cached.participants.map((p) => p.id)).to.deep.equal([BOB_LID]);
    await h.transport.sendText(GROUP, 'hi');
    expect(h.sockets.last.groupQueries).to.deep.equal([]);
  });
});

describe('WhatsApp transport: failed sends reported later, and disappearing timers (fake socket)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await setup();
    await link(h);
  });
  afterEach(cleanup);

  it('a 463 (as rc14 reports it, with its "restricted" text) is a failure for that contact: logged, counted, told honestly, not resent, no restriction', async () => {
    const changes: unknown[] = [];
    h.transport.onRestrictionChange((r) => changes.push(r));
    const sent = await h.transport.sendText(ALICE, 'hello');
    // rc14 attaches ACCOUNT_RESTRICTED_TEXT to every 463 without asking WhatsApp.
    h.sockets.last.sendFailed(ALICE, sent.id, '463', ACCOUNT_RESTRICTED_TEXT);
    const line = h.logs().find((l) => String(l.msg).startsWith('WhatsApp did not deliver a sent message'));
    expect(line).to.include({ id: sent.id, code: '463', chat: ALICE, level: 40 });
    expect(line!.msg).to.include('privacy token');
    expect(h.transport.sendFailures()).to.deep.equal({ '463': 1 });
    // WhatsApp is asked; it says the account is not restricted.
    await h.until(() => h.messages().includes('asked WhatsApp whether the account is restricted after a 463'));
    expect(h.sockets.last.timelockChecks).to.equal(1);
    expect(h.transport.isRestricted()).to.equal(false);
    expect(h.transport.session().restricted).to.equal(undefined);
    expect(changes).to.deep.equal([]);
    expect(h.notices.filter((n) => n.key === 'whatsapp-restricted')).to.deep.equal([]);
    // The owners hear which chat missed its message and why, without the word of a restriction that is not there.
    const told = h.notices.filter((n) => n.key === `whatsapp-undelivered:${ALICE}`);
    expect(told).to.have.length(1);
    expect(told[0].text).to.include(ALICE).and.include('463').and.include('no account restriction');
    expect(h.sockets.last.sent).to.have.length(1);
    // More 463s soon after do not query WhatsApp again and again.
    const again = await h.transport.sendText(ALICE, 'hello again');
    h.sockets.last.sendFailed(ALICE, again.id, '463', ACCOUNT_RESTRICTED_TEXT);
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.sockets.last.timelockChecks).to.equal(1);
    expect(h.transport.sendFailures()).to.deep.equal({ '463': 2 });
  });

  it('a 463 becomes a restriction only when WhatsApp confirms one; its end date is kept, and it is lifted when WhatsApp says so', async () => {
    const changes: unknown[] = [];
    h.transport.onRestrictionChange((r) => changes.push(r));
    const ends = new Date(Date.now() + 3 * 3600_000);
    h.sockets.last.reachoutTimelock = { isActive: true, timeEnforcementEnds: ends, enforcementType: 'DEFAULT' };
    const sent = await h.transport.sendText(ALICE, 'hello');
    h.sockets.last.sendFailed(ALICE, sent.id, '463', ACCOUNT_RESTRICTED_TEXT);
    await h.until(() => h.transport.isRestricted());
    expect(h.transport.restriction()?.until).to.equal(ends.getTime());
    expect(h.transport.session().restricted?.reason).to.include('time-lock');
    expect(h.notices.filter((n) => n.key === 'whatsapp-restricted').map((n) => n.kind)).to.deep.equal(['raise']);
    expect(changes).to.have.length(1);
    // WhatsApp's own notification that the lock ended.
    h.sockets.last.ev.emit('connection.update', { reachoutTimeLock: { isActive: false } });
    expect(h.transport.isRestricted()).to.equal(false);
    expect(h.notices.at(-1)).to.include({ kind: 'recover', key: 'whatsapp-restricted' });
    expect(changes.at(-1)).to.equal(undefined);
  });

  it('when WhatsApp cannot be asked, a 463 stays a failure for that contact; 479 is counted but never checked', async () => {
    h.sockets.last.reachoutTimelock = new Error('query timed out');
    const a = await h.transport.sendText(ALICE, 'a');
    h.sockets.last.sendFailed(ALICE, a.id, '479');
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.sockets.last.timelockChecks).to.equal(0);
    const b = await h.transport.sendText(ALICE, 'b');
    h.sockets.last.sendFailed(ALICE, b.id, '463', ACCOUNT_RESTRICTED_TEXT);
    await h.until(() => h.messages().some((m) => m.startsWith('could not ask WhatsApp whether the account is restricted')));
    expect(h.transport.sendFailures()).to.deep.equal({ '479': 1, '463': 1 });
    expect(h.transport.isRestricted()).to.equal(false);
  });

  it('replies inherit the chat’s disappearing-message timer, and stop when it is turned off', async () => {
    const week = 7 * 24 * 3600;
    const incoming = waMessage({ extendedTextMessage: { text: 'hi', contextInfo: { expiration: week } } }, { from: ALICE });
    h.sockets.last.deliver([incoming]);
    await h.transport.idle();
    await h.transport.sendText(ALICE, 'reply', { quotedId: incoming.key.id! });
    expect(h.sockets.last.sent[0].options).to.include({ ephemeralExpiration: week });
    const file = `${h.dir}/x.ogg`;
    await (await import('node:fs/promises')).writeFile(file, 'OggS');
    await h.transport.sendMedia(ALICE, { kind: 'voice', path: file });
    expect(h.sockets.last.sent[1].options).to.include({ ephemeralExpiration: week });

    h.sockets.last.deliver([waMessage({ protocolMessage: { type: proto.Message.ProtocolMessage.Type.EPHEMERAL_SETTING, ephemeralExpiration: 0 } }, { from: ALICE })]);
    await h.transport.idle();
    await h.transport.sendText(ALICE, 'after');
    expect(h.sockets.last.sent[2].options?.ephemeralExpiration).to.equal(undefined);
    // Other chats are not affected.
    await h.transport.sendText('6281299990000@s.whatsapp.net', 'x');
    expect(h.sockets.last.sent[3].options?.ephemeralExpiration).to.equal(undefined);
  });

  it('a group’s timer comes from its metadata (ephemeralDuration)', async () => {
    h.sockets.last.ev.emit('groups.update', [groupMeta(GROUP, { ephemeralDuration: 86400 })]);
    await h.transport.sendText(GROUP, 'hello group');
    expect(h.sockets.last.sent[0].options).to.include({ ephemeralExpiration: 86400 });
    h.sockets.last.deliver([waText('hi', { chat: GROUP, from: ALICE_LID })]);
    await h.transport.idle();
    // Group members' phone numbers in the metadata identify a LID-only sender.
    expect(h.received.map((m) => [m.senderId, m.senderAltId])).to.deep.equal([[ALICE, ALICE_LID]]);
  });

  it('a group’s timer change (Baileys’ EPHEMERAL_SETTING message, or the stub) updates the cached metadata, so later metadata updates keep it', async () => {
    h.sockets.last.ev.emit('groups.upsert', [groupMeta(GROUP, { ephemeralDuration: 86400 })]);
    // What rc14 makes of the group's `<ephemeral expiration="604800"/>` notification.
    h.sockets.last.deliver([waMessage({ protocolMessage: { type: proto.Message.ProtocolMessage.Type.EPHEMERAL_SETTING, ephemeralExpiration: 604800 } }, { chat: GROUP, from: ALICE_LID })]);
    await h.transport.idle();
    expect((await h.sockets.last.options.cachedGroupMetadata!(GROUP))?.ephemeralDuration).to.equal(604800);
    // A partial update (a new subject) merges into the cached entry: the new timer stays.
    h.sockets.last.ev.emit('groups.update', [{ id: GROUP, subject: 'renamed' }]);
    await h.transport.sendText(GROUP, 'after the change');
    expect(h.sockets.last.sent.at(-1)!.options).to.include({ ephemeralExpiration: 604800 });

    // Turned off, as a stub.
    const off = proto.WebMessageInfo.fromObject({ key: { remoteJid: GROUP, id: '3EB0TIMEROFF01', fromMe: false, participant: ALICE_LID }, messageStubType: proto.WebMessageInfo.StubType.CHANGE_EPHEMERAL_SETTING, messageStubParameters: ['0'], messageTimestamp: Math.floor(Date.now() / 1000) });
    h.sockets.last.deliver([off as never]);
    await h.transport.idle();
    h.sockets.last.ev.emit('groups.update', [{ id: GROUP, subject: 'renamed again' }]);
    expect((await h.sockets.last.options.cachedGroupMetadata!(GROUP))?.ephemeralDuration ?? 0).to.equal(0);
    await h.transport.sendText(GROUP, 'after off');
    expect(h.sockets.last.sent.at(-1)!.options?.ephemeralExpiration).to.equal(undefined);
  });
});
