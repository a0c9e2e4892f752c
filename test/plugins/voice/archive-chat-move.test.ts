import { expect } from 'chai';
import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { safeFileName } from '../../../core/storage.js';
import { AudioArchive, archivedNotesWhere, moveArchivedChat, type NoteInput } from '../../../plugins/voice/archive.js';
import { tempDir } from '../../helpers/checkout.js';

const LID = '98765432100001@lid';
const PHONE = '6281211110000@s.whatsapp.net';
const AT = Date.parse('2026-11-01T10:00:00Z');

const note = (transcript: string, at: number, extra: Partial<NoteInput> = {}): NoteInput => ({ messageId: `m-${transcript.replace(/\W/g, '')}`, senderId: PHONE, at, transcript, ...extra });
const transcripts = async (archive: AudioArchive, chat: string, query: string) => (await archive.search(chat, query, 20)).map((h) => h.note.transcript).sort();

describe('audio archive: a private chat moving from its LID to its phone id', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('voice-move-');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('takes notes, audio and context along; nothing stays under the LID; a note after the move does not bring the LID folder back', async () => {
    const archive = new AudioArchive(dir);
    await archive.add(LID, note('the plumber comes on tuesday', AT, { audio: { bytes: Buffer.from('OggS-plumber'), ext: 'ogg' }, before: [{ id: 'c1', senderId: PHONE, at: AT - 1, text: 'the sink leaks' }] }));
    await archive.observe(LID, { id: 'c2', senderId: 'bot', at: AT + 1, text: 'noted the plumber' });
    expect(await transcripts(archive, LID, 'plumber')).to.have.length(1); // loaded and indexed before the move

    expect(await moveArchivedChat(archive, LID, PHONE)).to.equal(1);
    expect(await readdir(dir)).to.deep.equal([safeFileName(PHONE)]);
    expect(await transcripts(archive, PHONE, 'plumber')).to.deep.equal(['the plumber comes on tuesday']);
    expect(await archive.search(LID, 'plumber')).to.deep.equal([]);
    // The note still collects its "after" context under the phone id.
    await archive.observe(PHONE, { id: 'c3', senderId: PHONE, at: AT + 2, text: 'thanks' });
    await archive.add(PHONE, note('the electrician comes on friday', AT + 10));
    expect(await readdir(dir)).to.deep.equal([safeFileName(PHONE)]);

    const reread = new AudioArchive(dir);
    expect(await transcripts(reread, PHONE, 'comes')).to.deep.equal(['the electrician comes on friday', 'the plumber comes on tuesday']);
    const [moved] = await archivedNotesWhere(reread, PHONE, (n) => n.transcript.includes('plumber'));
    expect(moved.before.map((m) => m.text)).to.deep.equal(['the sink leaks']);
    expect(moved.after.map((m) => m.text)).to.deep.equal(['noted the plumber', 'thanks']);
    expect(await readFile(reread.audioPath(PHONE, moved)!, 'utf8')).to.equal('OggS-plumber');
  });

  it('onto a chat with notes already: both kept, its own notes keep their numbers and audio', async () => {
    const archive = new AudioArchive(dir);
    await archive.add(PHONE, note('phone note about the garden', AT, { audio: { bytes: Buffer.from('phone-audio'), ext: 'ogg' } }));
    await archive.add(LID, note('lid note about the garden', AT + 5, { audio: { bytes: Buffer.from('lid-audio'), ext: 'ogg' } }));
    await archive.add(LID, note('second lid note about the garden', AT + 6));
    expect(await transcripts(archive, PHONE, 'garden')).to.have.length(1);
    await moveArchivedChat(archive, LID, PHONE);
    for (const a of [archive, new AudioArchive(dir)]) {
      const notes = await archivedNotesWhere(a, PHONE, () => true);
      expect(notes.map((n) => [n.seq, n.transcript])).to.deep.equal([[1, 'phone note about the garden'], [2, 'lid note about the garden'], [3, 'second lid note about the garden']]);
      expect(await readFile(a.audioPath(PHONE, notes[0])!, 'utf8')).to.equal('phone-audio');
      expect(await readFile(a.audioPath(PHONE, notes[1])!, 'utf8')).to.equal('lid-audio');
      expect(await transcripts(a, PHONE, 'garden')).to.have.length(3);
    }
  });

  it('a move cut short by a crash (notes visible under the phone id, the LID folder still there) is finished without duplicates', async () => {
    const archive = new AudioArchive(dir);
    await archive.add(LID, note('the key is under the mat', AT));
    const lidDir = path.join(dir, safeFileName(LID));
    const copy = `${dir}-lid-copy`;
    await cp(lidDir, copy, { recursive: true });
    await moveArchivedChat(archive, LID, PHONE);
    await cp(copy, lidDir, { recursive: true });
    await rm(copy, { recursive: true, force: true });

    const restarted = new AudioArchive(dir);
    expect(await moveArchivedChat(restarted, LID, PHONE)).to.equal(0);
    expect(await restarted.count(PHONE)).to.equal(1);
    expect(await readdir(dir)).to.deep.equal([safeFileName(PHONE)]);
  });

  it('a move cut short before the notes became visible (copies written, no segment yet) moves them once', async () => {
    const archive = new AudioArchive(dir);
    await archive.add(LID, note('the code is 7731', AT, { audio: { bytes: Buffer.from('lid-audio'), ext: 'ogg' } }));
    // The crash: the audio copy is under the phone id, the note's line (which makes it visible) is not.
    const lidDir = path.join(dir, safeFileName(LID));
    const phoneDir = path.join(dir, safeFileName(PHONE));
    await cp(path.join(lidDir, 'audio'), path.join(phoneDir, 'audio'), { recursive: true });

    const restarted = new AudioArchive(dir);
    expect(await restarted.count(PHONE)).to.equal(0);
    expect(await moveArchivedChat(restarted, LID, PHONE)).to.equal(1);
    const notes = await archivedNotesWhere(new AudioArchive(dir), PHONE, () => true);
    expect(notes.map((n) => n.transcript)).to.deep.equal(['the code is 7731']);
    expect(await readFile(restarted.audioPath(PHONE, notes[0])!, 'utf8')).to.equal('lid-audio');
    expect(await readdir(dir)).to.deep.equal([safeFileName(PHONE)]);
  });

  it('a LID segment set aside as corrupt moves along with its bytes', async () => {
    const archive = new AudioArchive(dir);
    await archive.add(LID, note('fine note', AT));
    // A segment file of the archive's earlier layout that cannot be read.
    await mkdir(path.join(dir, safeFileName(LID), 'notes'), { recursive: true });
    await writeFile(path.join(dir, safeFileName(LID), 'notes', '000001.json'), '{"broken": true, "words": "odd bytes"}');
    const fresh = new AudioArchive(dir);
    await moveArchivedChat(fresh, LID, PHONE);
    expect(await readdir(dir)).to.deep.equal([safeFileName(PHONE)]);
    const notes = await readdir(path.join(dir, safeFileName(PHONE), 'notes'));
    const aside = notes.find((n) => n.startsWith('000001.json.corrupt-'));
    expect(aside, notes.join(', ')).to.be.a('string');
    expect(await readFile(path.join(dir, safeFileName(PHONE), 'notes', aside!), 'utf8')).to.include('odd bytes');
    expect(await transcripts(fresh, PHONE, 'fine')).to.deep.equal(['fine note']);
  });
});
