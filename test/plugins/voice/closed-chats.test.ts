import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import { FakeAudio, startTestBot, type TestBot } from '../../../app/testing/index.js';
import accessPlugin from '../../../plugins/access/index.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { domainFor } from '../../../core/services/store/data-domain.js';
import { makeTone } from './audio-files.js';

const BOT = '62899999999';
const OWNER = '62800000001';
const MEMBER = '62811111111@s.whatsapp.net';
const STRANGER = '62833333333@s.whatsapp.net';
const GROUP = '120363000000000088@g.us';
/** Words only the transcript of the attacked note holds: found anywhere on disk, the note was kept. */
const SECRET_WORDS = 'zanzibar pineapple ledger';

/** Every file under `dir`, with its bytes. */
async function filesUnder(dir: string): Promise<Array<{ file: string; bytes: Buffer }>> {
  const out: Array<{ file: string; bytes: Buffer }> = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name);
    out.push({ file, bytes: await readFile(file) });
  }
  return out;
}

/**
 * A chat the bot does not take part in costs nothing and keeps nothing: the observers (the voice plugin hears, archives
 * and reacts to every note of a chat it takes part in) run only after the chat rules, so a note in a group no owner
 * opened, in a chat the owner paused, or from a stranger held by pairing is never downloaded, never reaches the audio
 * provider and leaves nothing on disk.
 */
describe('voice notes in chats the bot does not take part in', function () {
  this.timeout(60_000);
  let audio: FakeAudio;
  let t: TestBot;
  let ogg: Buffer;
  let downloads: number;

  before(async () => {
    ogg = makeTone(await tempDir('voice-closed-'), 'note.ogg', 1.2);
  });

  beforeEach(async () => {
    downloads = 0;
    audio = await FakeAudio.start(() => SECRET_WORDS);
    t = await startTestBot([createVoicePlugin({ random: () => 0 }), accessPlugin], {
      audio,
      config: { targetUserIds: [BOT], owners: [OWNER], access: { mode: 'pairing', allow: [], block: [] }, groups: { policy: 'allowlist' } },
    });
  });

  afterEach(async () => {
    await t?.stop();
    await audio.close();
  });

  const note = (): IncomingMedia => ({
    kind: 'voice',
    mimetype: 'audio/ogg; codecs=opus',
    size: ogg.length,
    download: async () => {
      downloads++;
      return ogg;
    },
  });

  /** Nothing reached the provider (transcription, the reactions' chat model) and nothing of the note is on disk. */
  async function expectNothingSpentOrKept(): Promise<void> {
    await t.app.bot.idle();
    // Every pending write on disk first (a chat record, a counter): the search reads all that is kept, and no file is
    // renamed under it while it reads.
    await domainFor(t.app.settings.dataDir).flushAll();
    expect(downloads, 'downloads').to.equal(0);
    expect(audio.uploads, 'transcription uploads').to.have.length(0);
    expect(audio.chats(), 'audio chat model calls').to.have.length(0);
    const probe = ogg.subarray(Math.floor(ogg.length / 2), Math.floor(ogg.length / 2) + 64);
    for (const { file, bytes } of await filesUnder(path.join(t.dir, 'data'))) {
      expect(bytes.includes(probe), `the note's bytes in ${file}`).to.equal(false);
      expect(bytes.toString('utf8'), `its words in ${file}`).not.to.include('zanzibar');
    }
  }

  it('a group no owner opened (groups.policy allowlist): no download, no provider call, nothing on disk', async () => {
    const actions = await t.transport.push({ chatId: GROUP, isGroup: true, senderId: MEMBER, media: note() });
    expect(actions).to.deep.equal([]);
    // Addressed to the bot changes nothing while the group is closed.
    await t.transport.push({ chatId: GROUP, isGroup: true, senderId: MEMBER, media: note(), mentions: [`${BOT}@s.whatsapp.net`] });
    await expectNothingSpentOrKept();
  });

  it('a group an owner closed with .activation off: nothing either', async () => {
    await t.transport.push({ chatId: GROUP, isGroup: true, senderId: `${OWNER}@s.whatsapp.net`, text: `@${BOT} .activation mention`, mentions: [`${BOT}@s.whatsapp.net`] });
    await t.transport.push({ chatId: GROUP, isGroup: true, senderId: `${OWNER}@s.whatsapp.net`, text: '.activation off' });
    await t.transport.push({ chatId: GROUP, isGroup: true, senderId: MEMBER, media: note() });
    await expectNothingSpentOrKept();
  });

  it('a chat the owner paused with .bot off: nothing either', async () => {
    const chat = `${OWNER}@s.whatsapp.net`;
    expect((await t.send({ chatId: chat, senderId: chat, text: '.bot off' })).join('\n')).to.match(/pause|quiet|off/i);
    await t.transport.push({ chatId: chat, senderId: chat, media: note() });
    await expectNothingSpentOrKept();
  });

  it('a stranger held by pairing: nothing either', async () => {
    await t.transport.push({ chatId: STRANGER, senderId: STRANGER, media: note() });
    await expectNothingSpentOrKept();
  });

  it('once an owner opens the group, a note for others there is heard and archived again', async () => {
    await t.transport.push({ chatId: GROUP, isGroup: true, senderId: `${OWNER}@s.whatsapp.net`, text: `@${BOT} .activation mention`, mentions: [`${BOT}@s.whatsapp.net`] });
    await t.transport.push({ chatId: GROUP, isGroup: true, senderId: MEMBER, media: note() });
    await t.app.bot.idle();
    expect(downloads).to.equal(1);
    expect(audio.uploads).to.have.length(1);
    await domainFor(t.app.settings.dataDir).flushAll();
    const kept = (await filesUnder(path.join(t.dir, 'data'))).filter(({ bytes }) => bytes.toString('utf8').includes('zanzibar'));
    expect(kept, 'the transcript archived').to.not.be.empty;
  });
});
