import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AudioArchive, type NoteInput } from '../../../plugins/voice/archive.js';
import { tempDir } from '../../helpers/checkout.js';
import { archiveAt, voiceArchiveAt } from '../../helpers/voice-archive.js';

const note = (transcript: string, extra: Partial<NoteInput> = {}): NoteInput => ({ messageId: `m-${Math.random()}`, senderId: '62811111111@s.whatsapp.net', at: Date.parse('2025-05-01T10:00:00Z'), transcript, ...extra });

describe('audio archive', () => {
  let dir: string;
  beforeEach(async () => {
    dir = path.join(await tempDir('voice-archive-'), 'audio_archive');
  });
  afterEach(() => rm(path.dirname(dir), { recursive: true, force: true }));

  it('needs a chat id for every call and has no way to search across chats', async () => {
    const archive = archiveAt(dir);
    await archive.add('A@g.us', note('the invoice number is 4711'));
    for (const bad of ['', '   ', undefined as unknown as string, null as unknown as string]) {
      let error: unknown;
      try {
        await archive.search(bad, 'invoice');
      } catch (err) {
        error = err;
      }
      expect(error, String(bad)).to.be.instanceOf(TypeError);
    }
    const methods = Object.getOwnPropertyNames(AudioArchive.prototype).filter((m) => m !== 'constructor');
    expect(methods.sort()).to.deep.equal(['add', 'addMany', 'audioPath', 'context', 'convertAll', 'count', 'flush', 'load', 'noteOf', 'observe', 'search'].sort());
  });

  it('never returns chat A notes for chat B, even with hostile chat ids and queries', async () => {
    const archive = archiveAt(dir);
    await archive.add('A@g.us', note('secret invoice number 4711 for the landlord'));
    const hostile = ['B@g.us', '../A@g.us', 'A@g.us/..', 'A@g.us ', 'a@g.us', 'A', 'A@g.us\u0000', '%41@g.us', '..', '.', '*'];
    for (const chat of hostile) {
      for (const query of ['invoice', '4711', 'A@g.us invoice', '*', 'secret invoice number 4711 for the landlord']) {
        expect(await archive.search(chat, query), `${JSON.stringify(chat)} / ${query}`).to.deep.equal([]);
      }
    }
    // A fresh archive reading the same folders agrees, and chat A still finds its own note.
    const reread = archiveAt(dir);
    for (const chat of hostile) expect(await reread.search(chat, 'invoice')).to.deep.equal([]);
    expect((await reread.search('A@g.us', 'invoice'))[0].note.transcript).to.include('4711');
    // Every folder stays inside the archive root.
    for (const entry of await readdir(dir).catch(() => [] as string[])) expect(entry.includes('/') || entry === '..' || entry === '.').to.equal(false);
  });

  it('ignores a segment file that belongs to another chat', async () => {
    const archive = archiveAt(dir);
    await archive.add('A@g.us', note('the invoice of chat A'));
    const foreign = { chatId: 'A@g.us', notes: [{ seq: 1, messageId: 'x', senderId: 's', at: 1, transcript: 'the invoice of chat A', kind: 'voice' }] };
    await mkdir(path.join(dir, 'B@g.us', 'notes'), { recursive: true });
    await writeFile(path.join(dir, 'B@g.us', 'notes', '000000.json'), JSON.stringify(foreign));
    expect(await archiveAt(dir).search('B@g.us', 'invoice')).to.deep.equal([]);
  });

  it('ranks matches, quotes them and keeps them across a restart', async () => {
    const archive = archiveAt(dir);
    await archive.add('A@g.us', note('we talked about the garden and the weather', { senderName: 'Sari' }));
    await archive.add('A@g.us', note('the invoice for march is attached, please pay the invoice soon', { senderName: 'Budi', audio: { bytes: Buffer.from('OggS fake'), ext: 'ogg' } }));
    const hits = await archiveAt(dir).search('A@g.us', 'invoice march', 5);
    expect(hits).to.have.length(1);
    expect(hits[0].note).to.include({ senderName: 'Budi', seq: 2 });
    expect(hits[0].quote).to.include('invoice for march');
    expect(existsSync(archive.audioPath('A@g.us', hits[0].note)!)).to.equal(true);
  });

  it('finds a note of a large chat after a restart and still indexes what came after', async function () {
    this.timeout(60_000);
    const archive = archiveAt(dir);
    const inputs = Array.from({ length: 2010 }, (_, i) => note(`note number ${i} about topic${i % 50}`));
    inputs[1234] = note('the one about the zebra crossing');
    await archive.addMany('big@g.us', inputs);
    await archive.flush();
    const reread = archiveAt(dir);
    expect((await reread.search('big@g.us', 'zebra'))[0].note.seq).to.equal(1235);
    await reread.add('big@g.us', note('a late note about a giraffe'));
    const third = archiveAt(dir);
    expect((await third.search('big@g.us', 'giraffe'))[0].note.seq).to.equal(2011);
    expect((await third.search('big@g.us', 'zebra'))[0].note.seq).to.equal(1235);
  });

  it('counts the notes a chat holds: an erased note (deleted for everyone) is not counted, though its number stays taken', async () => {
    const { archive, privacy } = voiceArchiveAt(dir);
    await archive.add('A@g.us', note('first note', { messageId: 'n1' }));
    await archive.add('A@g.us', note('second note', { messageId: 'n2' }));
    expect(await archive.count('A@g.us')).to.equal(2);
    expect(await privacy.revoke!('A@g.us', 'n1', ['62811111111@s.whatsapp.net'])).to.equal(1);
    expect(await archive.count('A@g.us')).to.equal(1);
    expect((await archive.noteOf('A@g.us', 'n1'))?.removed, 'the marker still says it was there').to.equal(true);
    expect((await archive.add('A@g.us', note('third note'))).seq).to.equal(3);
  });
});
