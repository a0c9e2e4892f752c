import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { readdir, rm, utimes } from 'node:fs/promises';
import path from 'node:path';
import { addTransactionCapability, type SignalKeyStore } from '@whiskeysockets/baileys';
import { makeLibSignalRepository } from '@whiskeysockets/baileys/lib/Signal/libsignal.js';
import { useDurableAuthState, type DurableAuthState } from '../../../core/adapters/whatsapp/auth-store.js';
import { tempDir } from '../../helpers/checkout.js';

const DAY = 86_400_000;
const BOT = { id: '4915100000001:7@s.whatsapp.net', lid: '200000000001:7@lid' };
const MEMBER = '300000000003@lid';
const QUIET = '120363000000000001@g.us';
const BUSY = '120363000000000002@g.us';
const OLD_PN_GROUP = '4915100000001-1600000000@g.us';

const silent = { level: 'silent', child: () => silent, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const signal = (keys: SignalKeyStore, creds: DurableAuthState['state']['creds']) =>
  makeLibSignalRepository({ creds, keys: addTransactionCapability(keys, silent as never, { maxCommitRetries: 1, delayBetweenTriesMs: 1 }) }, silent as never);

/**
 * The bot's side of a group send as Baileys' `relayMessage` does it: encrypt with the bot's own sender key, and hand
 * the key (SKDM) only to the devices `sender-key-memory` does not list yet. The member then tries to read it.
 */
async function sendToGroup(bot: DurableAuthState, member: ReturnType<typeof signal>, group: string, meId: string, text: string): Promise<string> {
  const repo = signal(bot.state.keys, bot.state.creds);
  const memory = (await bot.state.keys.get('sender-key-memory', [group]))[group] ?? {};
  const { ciphertext, senderKeyDistributionMessage } = await repo.encryptGroupMessage({ group, data: Buffer.from(text), meId });
  if (!memory[MEMBER]) {
    await member.processSenderKeyDistributionMessage({ item: { groupId: group, axolotlSenderKeyDistributionMessage: senderKeyDistributionMessage }, authorJid: meId });
    await bot.state.keys.set({ 'sender-key-memory': { [group]: { ...memory, [MEMBER]: true } } });
  }
  return Buffer.from(await member.decryptGroupMessage({ group, authorJid: meId, msg: ciphertext })).toString();
}

describe('WhatsApp session pruning: a group’s own sender key and its sender-key memory go together (real auth folder, real Signal)', () => {
  let dir: string;
  let folder: string;
  let member: ReturnType<typeof signal>;

  beforeEach(async () => {
    dir = await tempDir('wabot-stale-keys-');
    folder = path.join(dir, 'session_auth');
    const memberAuth = await useDurableAuthState(path.join(dir, 'member_auth'));
    member = signal(memberAuth.state.keys, memberAuth.state.creds);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Ages the named files of the bot's folder by `days`. */
  const age = async (days: number, names: string[]) => {
    const when = new Date(Date.now() - days * DAY);
    for (const name of names) await utimes(path.join(folder, name), when, when);
  };
  const senderKeyFiles = async (group: string) => (await readdir(folder)).filter((n) => n.startsWith(`sender-key-${group.replace(/:/g, '-')}--`) || n === `sender-key-memory-${group}.json`).sort();

  it('a quiet group loses both after 30 days, so the bot’s next message there hands out a new key every member can read', async () => {
    const bot = await useDurableAuthState(folder);
    bot.state.creds.me = { ...BOT };
    await bot.saveCreds();
    expect(await sendToGroup(bot, member, QUIET, BOT.lid, 'hello group')).to.equal('hello group');
    expect(await sendToGroup(bot, member, OLD_PN_GROUP, BOT.id, 'hello old group')).to.equal('hello old group');
    // Another member's sender key, read from their messages long ago: it goes on its own.
    await bot.state.keys.set({ 'sender-key': { [`${QUIET}::300000000003_1::0`]: Buffer.from('their key') } });
    await bot.flush();
    const quietFiles = await senderKeyFiles(QUIET);
    const pnFiles = await senderKeyFiles(OLD_PN_GROUP);
    expect(quietFiles).to.have.length(3); // the bot's key, the member's key, the memory
    expect(pnFiles).to.have.length(2);
    await age(40, [...quietFiles, ...pnFiles]);

    const restarted = await useDurableAuthState(folder);
    const removed = await restarted.pruneStale(30 * DAY);
    expect(removed.sort()).to.deep.equal([...quietFiles, ...pnFiles].sort());
    expect(await senderKeyFiles(QUIET)).to.deep.equal([]);
    expect(await sendToGroup(restarted, member, QUIET, BOT.lid, 'still there?')).to.equal('still there?');
    expect(await sendToGroup(restarted, member, OLD_PN_GROUP, BOT.id, 'me too')).to.equal('me too');
  });

  it('keeps both while either is in use (the memory written recently, or the key), and the next message stays readable', async () => {
    const bot = await useDurableAuthState(folder);
    bot.state.creds.me = { ...BOT };
    await bot.saveCreds();
    await sendToGroup(bot, member, QUIET, BOT.lid, 'one');
    await sendToGroup(bot, member, BUSY, BOT.lid, 'two');
    await bot.flush();
    const quietFiles = await senderKeyFiles(QUIET);
    const busyFiles = await senderKeyFiles(BUSY);
    // QUIET: the key is old, its memory fresh. BUSY: the memory is old, the key fresh.
    await age(40, quietFiles.filter((n) => !n.startsWith('sender-key-memory-')));
    await age(40, busyFiles.filter((n) => n.startsWith('sender-key-memory-')));

    const restarted = await useDurableAuthState(folder);
    expect(await restarted.pruneStale(30 * DAY)).to.deep.equal([]);
    for (const name of [...quietFiles, ...busyFiles]) expect(existsSync(path.join(folder, name)), name).to.equal(true);
    expect(await sendToGroup(restarted, member, QUIET, BOT.lid, 'three')).to.equal('three');
    expect(await sendToGroup(restarted, member, BUSY, BOT.lid, 'four')).to.equal('four');
  });
});
