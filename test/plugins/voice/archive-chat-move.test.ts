import { expect } from 'chai';
import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { safeFileName } from '../../../core/index.js';
import type { AudioArchive, NoteInput } from '../../../plugins/voice/archive.js';
import { tempDir } from '../../helpers/checkout.js';
import { voiceArchiveAt } from '../../helpers/voice-archive.js';

const LID = '98765432100001@lid';
const PHONE = '6281211110000@s.whatsapp.net';
const AT = Date.parse('2026-11-01T10:00:00Z');

const note = (transcript: string, at: number, extra: Partial<NoteInput> = {}): NoteInput => ({ messageId: `m-${transcript.replace(/\W/g, '')}`, senderId: PHONE, at, transcript, ...extra });
const transcripts = async (archive: AudioArchive, chat: string, query: string) => (await archive.search(chat, query, 20)).map((h) => h.note.transcript).sort();

/*
 * The archive's chat move follows from its declaration (VOICE_ARCHIVE): the core's privacy participant moves the
 * lines and the audio files. Real files; a new `voiceArchiveAt` over the same folder is a restart.
 */
describe('audio archive: a private chat moving from its LID to its phone id', () => {
  let dir: string;
  beforeEach(async () => {
    dir = path.join(await tempDir('voice-move-'), 'audio_archive');
  });
  afterEach(() => rm(path.dirname(dir), { recursive: true, force: true }));

  it('takes notes, audio and context along; nothing stays under the LID; a note after the move does not bring the LID folder back', async () => {
    const { archive, privacy } = voiceArchiveAt(dir);
    await archive.add(LID, note('the plumber comes on tuesday', AT, { audio: { bytes: Buffer.from('OggS-plumber'), ext: 'ogg' }, before: [{ id: 'c1', senderId: PHONE, at: AT - 1, text: 'the sink leaks' }] }));
    await archive.observe(LID, { id: 'c2', senderId: 'bot', at: AT + 1, text: 'noted the plumber' });
    expect(await transcripts(archive, LID, 'plumber')).to.have.length(1); // loaded and indexed before the move

    await privacy.moveChat!(LID, PHONE);
    expect(await readdir(dir)).to.deep.equal([safeFileName(PHONE)]);
    expect(await transcripts(archive, PHONE, 'plumber')).to.deep.equal(['the plumber comes on tuesday']);
    expect(await archive.search(LID, 'plumber')).to.deep.equal([]);
    // The note still collects its "after" context under the phone id.
    await archive.observe(PHONE, { id: 'c3', senderId: PHONE, at: AT + 2, text: 'thanks' });
    await archive.add(PHONE, note('the electrician comes on friday', AT + 10));
    await archive.flush();
    expect(await readdir(dir)).to.deep.equal([safeFileName(PHONE)]);

    const reread = voiceArchiveAt(dir).archive;
    expect(await transcripts(reread, PHONE, 'comes')).to.deep.equal(['the electrician comes on friday', 'the plumber comes on tuesday']);
    const moved = (await reread.noteOf(PHONE, 'm-theplumbercomesontuesday'))!;
    const context = await reread.context(PHONE, moved.seq);
    expect(context.before.map((m) => m.text)).to.deep.equal(['the sink leaks']);
    expect(context.after.map((m) => m.text)).to.deep.equal(['noted the plumber', 'thanks']);
    expect(await readFile(reread.audioPath(PHONE, moved)!, 'utf8')).to.equal('OggS-plumber');
  });

  it('onto a chat with notes already: both kept, each note with its own audio', async () => {
    const { archive, privacy } = voiceArchiveAt(dir);
    await archive.add(PHONE, note('phone note about the garden', AT, { audio: { bytes: Buffer.from('phone-audio'), ext: 'ogg' } }));
    await archive.add(LID, note('lid note about the garden', AT + 5, { audio: { bytes: Buffer.from('lid-audio'), ext: 'ogg' } }));
    await archive.add(LID, note('second lid note about the garden', AT + 6));
    expect(await transcripts(archive, PHONE, 'garden')).to.have.length(1);
    await privacy.moveChat!(LID, PHONE);
    for (const a of [archive, voiceArchiveAt(dir).archive]) {
      const phone = (await a.noteOf(PHONE, 'm-phonenoteaboutthegarden'))!;
      const lid = (await a.noteOf(PHONE, 'm-lidnoteaboutthegarden'))!;
      expect(await readFile(a.audioPath(PHONE, phone)!, 'utf8')).to.equal('phone-audio');
      expect(await readFile(a.audioPath(PHONE, lid)!, 'utf8')).to.equal('lid-audio');
      expect(await transcripts(a, PHONE, 'garden')).to.have.length(3);
    }
    // A note after the move gets a number none of them has.
    const next = await archive.add(PHONE, note('third garden note', AT + 20));
    expect(next.seq).to.equal(3);
  });

  it('audio of an earlier version, named by note number in both chats, is renamed after its message first: a move never swaps two notes\' audio', async () => {
    // Both chats as versions before 2026-11 left them: note 1 of each with its audio at audio/1.ogg.
    const line = (chat: string, id: string, text: string) =>
      `${JSON.stringify({ 'voice-archive': 1, chat })}\n${JSON.stringify({ id, seq: 1, senderId: PHONE, text, at: AT, kind: 'voice', audioFile: 'audio/1.ogg' })}\n`;
    for (const [chat, id, text, bytes] of [[LID, 'lid-1', 'lid boat note', 'LID-BOAT'], [PHONE, 'phone-1', 'phone boat note', 'PHONE-BOAT']]) {
      const folder = path.join(dir, safeFileName(chat));
      await mkdir(path.join(folder, 'audio'), { recursive: true });
      await writeFile(path.join(folder, '2026-11.jsonl'), line(chat, id, text));
      await writeFile(path.join(folder, 'audio', '1.ogg'), bytes);
    }
    const { archive, privacy } = voiceArchiveAt(dir);
    await archive.convertAll();
    await privacy.moveChat!(LID, PHONE);
    const reread = voiceArchiveAt(dir).archive;
    expect(await readFile(reread.audioPath(PHONE, (await reread.noteOf(PHONE, 'phone-1'))!)!, 'utf8')).to.equal('PHONE-BOAT');
    expect(await readFile(reread.audioPath(PHONE, (await reread.noteOf(PHONE, 'lid-1'))!)!, 'utf8')).to.equal('LID-BOAT');
    expect((await readdir(path.join(dir, safeFileName(PHONE), 'audio'))).sort()).to.deep.equal(['msg-lid-1.ogg', 'msg-phone-1.ogg']);
  });

  it('a move announced again after a restart (the notes moved in one transaction) adds nothing twice', async () => {
    const { archive, privacy } = voiceArchiveAt(dir);
    await archive.add(LID, note('the key is under the mat', AT, { audio: { bytes: Buffer.from('KEY-AUDIO'), ext: 'ogg' } }));
    await privacy.moveChat!(LID, PHONE);

    const restarted = voiceArchiveAt(dir);
    await restarted.privacy.moveChat!(LID, PHONE);
    expect(await restarted.archive.count(PHONE)).to.equal(1);
    expect(await restarted.archive.count(LID)).to.equal(0);
    expect(await readdir(dir)).to.deep.equal([safeFileName(PHONE)]);
  });

  it('a move cut short before the notes became visible (audio copied, no line yet) moves them once, audio kept', async () => {
    const { archive } = voiceArchiveAt(dir);
    await archive.add(LID, note('the code is 7731', AT, { audio: { bytes: Buffer.from('lid-audio'), ext: 'ogg' } }));
    await archive.flush();
    // The crash: the audio copy is under the phone id, the note's line (which makes it visible) is not.
    const lidDir = path.join(dir, safeFileName(LID));
    const phoneDir = path.join(dir, safeFileName(PHONE));
    await cp(path.join(lidDir, 'audio'), path.join(phoneDir, 'audio'), { recursive: true });

    const restarted = voiceArchiveAt(dir);
    expect(await restarted.archive.count(PHONE)).to.equal(0);
    await restarted.privacy.moveChat!(LID, PHONE);
    const fresh = voiceArchiveAt(dir).archive;
    const moved = (await fresh.noteOf(PHONE, 'm-thecodeis7731'))!;
    expect(moved.transcript).to.equal('the code is 7731');
    expect(await readFile(fresh.audioPath(PHONE, moved)!, 'utf8')).to.equal('lid-audio');
    expect(await readdir(path.join(phoneDir, 'audio')), 'the same bytes twice are kept once').to.have.length(1);
    expect(await readdir(dir)).to.deep.equal([safeFileName(PHONE)]);
  });

  it('a LID segment set aside as corrupt moves along with its bytes', async () => {
    const { archive } = voiceArchiveAt(dir);
    await archive.add(LID, note('fine note', AT));
    await archive.flush();
    // A segment file of the archive's earlier layout that cannot be read.
    await mkdir(path.join(dir, safeFileName(LID), 'notes'), { recursive: true });
    await writeFile(path.join(dir, safeFileName(LID), 'notes', '000001.json'), '{"broken": true, "words": "odd bytes"}');
    const fresh = voiceArchiveAt(dir);
    await fresh.archive.convertAll();
    await fresh.privacy.moveChat!(LID, PHONE);
    expect(await readdir(dir)).to.deep.equal([safeFileName(PHONE)]);
    const notes = await readdir(path.join(dir, safeFileName(PHONE), 'notes'));
    const aside = notes.find((n) => n.startsWith('000001.json.corrupt-'));
    expect(aside, notes.join(', ')).to.be.a('string');
    expect(await readFile(path.join(dir, safeFileName(PHONE), 'notes', aside!), 'utf8')).to.include('odd bytes');
    expect(await transcripts(fresh.archive, PHONE, 'fine')).to.deep.equal(['fine note']);
  });
});
