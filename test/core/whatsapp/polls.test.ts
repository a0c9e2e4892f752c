import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { PollVote } from '../../../core/kernel/port/message.js';
import { BOT_ME, GROUP, sentPoll, waPollVote } from '../../fakes/baileys-socket.js';
import { cleanup, link, setup, type Harness } from './harness.js';
import { storeDatabaseText, storedDocuments, storedRecordRows } from '../../helpers/disk-text.js';
import { databaseFor } from '../../../core/services/store/database.js';

const ALICE = '6281211110000@s.whatsapp.net';
const ALICE_LID = '98765432100001@lid';
const BOB = '6281222220000@s.whatsapp.net';
const BOB_LID = '98765432100002@lid';

async function started(votes: PollVote[], dir?: string): Promise<Harness> {
  const h = await setup({ dir, events: { onPollVote: (v) => void votes.push(v) } });
  if (dir) h.sockets.last.open(BOT_ME);
  else await link(h);
  return h;
}

describe('WhatsApp transport: polls and their votes (fake socket, real Baileys messages)', () => {
  afterEach(cleanup);

  it('sends a single-choice poll as Baileys builds it, and a vote made like a phone makes it arrives with its option', async () => {
    const votes: PollVote[] = [];
    const h = await started(votes);
    const sent = await h.transport.sendPoll(ALICE, { question: 'Which pie?', options: ['kiwi pie', 'mango tart', 'plum cake'], multiple: false });
    const record = h.sockets.last.sent.at(-1)!;
    expect(record.message?.pollCreationMessageV3?.name).to.equal('Which pie?');
    const poll = sentPoll(record);
    expect(poll).to.deep.include({ id: sent.id, options: ['kiwi pie', 'mango tart', 'plum cake'], selectable: 1 });
    // A private chat addressed by LID: the phone encrypts with the bot's LID and its own phone number.
    h.sockets.last.deliver([waPollVote(poll, ['mango tart'], { from: ALICE_LID, fromAlt: ALICE, pushName: 'Ann' })]);
    await h.transport.idle();
    expect(votes).to.deep.equal([{ chatId: ALICE, pollId: sent.id, voterId: ALICE, voterName: 'Ann', question: 'Which pie?', selected: ['mango tart'] }]);
  });

  it('a changed vote replaces the earlier one (several choices), and a vote taken back holds no option', async () => {
    const votes: PollVote[] = [];
    const h = await started(votes);
    await h.transport.sendPoll(GROUP, { question: 'Snacks?', options: ['nuts', 'chips', 'fruit'], multiple: true });
    const poll = sentPoll(h.sockets.last.sent.at(-1)!);
    expect(poll.selectable).to.equal(0);
    const bob = { chat: GROUP, from: BOB_LID, fromAlt: BOB, pushName: 'Bob' };
    h.sockets.last.deliver([waPollVote(poll, ['nuts', 'fruit'], bob)]);
    h.sockets.last.deliver([waPollVote(poll, ['chips'], bob)]);
    h.sockets.last.deliver([waPollVote(poll, [], bob)]);
    await h.transport.idle();
    expect(votes.map((v) => [v.chatId, v.voterId, v.selected])).to.deep.equal([
      [GROUP, BOB, ['nuts', 'fruit']],
      [GROUP, BOB, ['chips']],
      [GROUP, BOB, []],
    ]);
  });

  it('a vote WhatsApp delivers again (the same message) counts once; a new vote of the same person still counts', async () => {
    const votes: PollVote[] = [];
    const h = await started(votes);
    await h.transport.sendPoll(GROUP, { question: 'Lunch?', options: ['soup', 'salad'], multiple: false });
    const poll = sentPoll(h.sockets.last.sent.at(-1)!);
    const vote = waPollVote(poll, ['soup'], { chat: GROUP, from: BOB_LID, fromAlt: BOB, pushName: 'Bob' });
    h.sockets.last.deliver([vote]);
    h.sockets.last.deliver([vote]);
    await h.transport.idle();
    h.sockets.last.deliver([vote]);
    await h.transport.idle();
    expect(votes.map((v) => v.selected)).to.deep.equal([['soup']]);
    h.sockets.last.deliver([waPollVote(poll, ['salad'], { chat: GROUP, from: BOB_LID, fromAlt: BOB, pushName: 'Bob' })]);
    await h.transport.idle();
    expect(votes.map((v) => v.selected)).to.deep.equal([['soup'], ['salad']]);
  });

  it('ignores votes on a poll the bot never sent, with another secret, from another chat, or claimed for another voter', async () => {
    const votes: PollVote[] = [];
    const h = await started(votes);
    await h.transport.sendPoll(ALICE, { question: 'Which pie?', options: ['kiwi pie', 'mango tart'], multiple: false });
    const poll = sentPoll(h.sockets.last.sent.at(-1)!);
    const alice = { from: ALICE_LID, fromAlt: ALICE };
    h.sockets.last.deliver([
      // A poll id the bot never sent.
      waPollVote({ id: '3EB0FORGEDPOLL0001', secret: randomBytes(32) }, ['kiwi pie'], alice),
      // The right id, a guessed secret.
      waPollVote({ id: poll.id, secret: randomBytes(32) }, ['kiwi pie'], alice),
      // A group member naming Alice's private poll (even with its secret).
      waPollVote(poll, ['kiwi pie'], { chat: GROUP, from: BOB_LID, fromAlt: BOB }),
      // Bob's envelope, a vote encrypted as Alice's.
      waPollVote(poll, ['kiwi pie'], { from: BOB_LID, fromAlt: BOB, voterJid: ALICE }),
      // An option the poll does not have.
      waPollVote(poll, ['cheese'], alice),
    ]);
    await h.transport.idle();
    expect(votes).to.deep.equal([]);
    h.sockets.last.deliver([waPollVote(poll, ['kiwi pie'], alice)]);
    await h.transport.idle();
    expect(votes.map((v) => v.selected)).to.deep.equal([['kiwi pie']]);
  });

  it('after a restart a vote still decrypts: the secret and options were on disk when sendPoll resolved', async () => {
    const votes: PollVote[] = [];
    const first = await started(votes);
    await first.transport.sendPoll(ALICE, { question: 'Which pie?', options: ['kiwi pie', 'mango tart'], multiple: false });
    const poll = sentPoll(first.sockets.last.sent.at(-1)!);
    await first.transport.stop();
    const second = await started(votes, first.dir);
    second.sockets.last.deliver([waPollVote(poll, ['kiwi pie'], { from: ALICE_LID, fromAlt: ALICE })]);
    await second.transport.idle();
    expect(votes.map((v) => [v.pollId, v.selected])).to.deep.equal([[poll.id, ['kiwi pie']]]);
  });

  it('a corrupt polls file is set aside with its bytes kept, and the bot goes on sending polls', async () => {
    const votes: PollVote[] = [];
    const first = await started(votes);
    await first.transport.sendPoll(ALICE, { question: 'Q?', options: ['a', 'b'], multiple: false });
    await first.transport.stop();
    // A list an earlier version kept in its file, its secret broken.
    const file = path.join(first.dir, 'data', 'whatsapp', 'polls.json');
    const kept = storedRecordRows(path.join(first.dir, 'data'), 'polls', 'whatsapp').map((row) => JSON.parse(JSON.parse(row).entry));
    const bytes = JSON.stringify({ version: 1, polls: kept.map((p) => ({ ...p, secret: 'short' })) });
    expect(bytes).to.include('short');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, bytes);
    const second = await started(votes, first.dir);
    await second.transport.sendPoll(ALICE, { question: 'Again?', options: ['yes', 'no'], multiple: false });
    const poll = sentPoll(second.sockets.last.sent.at(-1)!);
    const aside = (await readdir(path.dirname(file))).filter((n) => n.startsWith('polls.json.corrupt-'));
    expect(aside).to.have.length(1);
    expect(await readFile(path.join(path.dirname(file), aside[0]), 'utf8')).to.equal(bytes);
    second.sockets.last.deliver([waPollVote(poll, ['yes'], { from: ALICE_LID, fromAlt: ALICE })]);
    await second.transport.idle();
    expect(votes.map((v) => v.selected)).to.deep.equal([['yes']]);
  });

  it('the polls the previous version kept as one document in the store database are taken in at start: a vote on one is still read', async () => {
    const votes: PollVote[] = [];
    const first = await started(votes);
    await first.transport.sendPoll(ALICE, { question: 'Lunch?', options: ['soup', 'salad'], multiple: false });
    const poll = sentPoll(first.sockets.last.sent.at(-1)!);
    await first.transport.stop();
    // As the previous version kept it: one Store.doc row holding the list.
    const data = path.join(first.dir, 'data');
    const kept = storedRecordRows(data, 'polls', 'whatsapp').map((row) => JSON.parse(JSON.parse(row).entry));
    expect(kept).to.have.length(1);
    const db = databaseFor(data);
    db.exec('DELETE FROM "record:whatsapp:polls"; CREATE TABLE "doc:whatsapp:polls" (key TEXT PRIMARY KEY, value TEXT NOT NULL);');
    db.run('INSERT INTO "doc:whatsapp:polls" (key, value) VALUES (?, ?)', ['', JSON.stringify({ version: 1, polls: kept })]);
    const second = await started(votes, first.dir);
    second.sockets.last.deliver([waPollVote(poll, ['salad'], { from: ALICE_LID, fromAlt: ALICE })]);
    await second.transport.idle();
    expect(votes.map((v) => v.selected)).to.deep.equal([['salad']]);
    expect(storedDocuments(data, 'whatsapp', 'polls')).to.deep.equal({});
  });

  it('privacy: a person’s polls are in their export without the secret, go with their delete, and follow their chat’s move', async () => {
    const votes: PollVote[] = [];
    const h = await started(votes);
    await h.transport.sendPoll(ALICE, { question: 'Alice?', options: ['a', 'b'], multiple: false });
    await h.transport.sendPoll(GROUP, { question: 'Group?', options: ['c', 'd'], multiple: false }, { answers: BOB });
    await h.transport.sendPoll(ALICE_LID, { question: 'Moving?', options: ['e', 'f'], multiple: false });
    const moving = sentPoll(h.sockets.last.sent.at(-1)!);
    const participant = h.transport.declaredStores().participants().find((p) => p.name === 'polls the bot sent')!;
    const exported = (await participant.exportFor([BOB])) as Array<Record<string, unknown>>;
    expect(exported.map((p) => p.question)).to.deep.equal(['Group?']);
    expect(exported[0]).to.not.have.property('secret');
    await participant.moveChat!(ALICE_LID, ALICE);
    expect(((await participant.exportFor([ALICE])) as Array<{ question: string }>).map((p) => p.question)).to.deep.equal(['Alice?', 'Moving?']);
    // After the move the vote arrives in the phone-number chat and is still read.
    h.sockets.last.deliver([waPollVote(moving, ['f'], { from: ALICE })]);
    await h.transport.idle();
    expect(votes.map((v) => [v.chatId, v.selected])).to.deep.equal([[ALICE, ['f']]]);
    expect(await participant.deleteFor([BOB])).to.equal(1);
    // The poll as sent is also kept for other devices' resends (in the same database): its own part of the delete takes it.
    for (const other of h.transport.declaredStores().participants()) if (other !== participant) await other.deleteFor([BOB]);
    // In no file of the store database (nor its WAL): the polls live there.
    const file = await storeDatabaseText(path.join(h.dir, 'data'));
    expect(file).to.not.include('Group?');
    expect(file).to.include('Alice?');
  });
});
