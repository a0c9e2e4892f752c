import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { registerDataHealth } from '../../../core/services/store/data-domain.js';
import { safeFileName } from '../../../core/index.js';
import { archiveAt, voiceArchiveAt } from '../../helpers/voice-archive.js';
import { storedSearchLogText } from '../../helpers/disk-text.js';
import { tempDir } from '../../helpers/checkout.js';
import { startTestBot } from '../../../app/testing/index.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';

const GROUP = '120363000000000001@g.us';
const ANA = '6281111111111@s.whatsapp.net';
const BUDI = '6282222222222@s.whatsapp.net';
const AT = Date.parse('2025-03-04T10:00:00Z');

/**
 * A chat folder exactly as the archive wrote it before it moved onto the core's search log: segment files of notes
 * (`notes/000000.json`), each note's context (`context/<seq>.json`), numbered audio files, the search-index snapshot
 * (`search-index.json` and its `index-*` folder) — and a second segment that is damaged.
 */
async function oldLayout(root: string): Promise<string> {
  const chat = path.join(root, safeFileName(GROUP));
  const notes = [
    { seq: 1, messageId: 'v1', senderId: ANA, senderName: 'Ana', at: AT, transcript: 'the boiler needs a new valve', kind: 'voice', audioFile: 'audio/1.ogg' },
    // Erased earlier (its sender's .mydata delete): the number stays, nothing else.
    { seq: 2, messageId: 'v2', senderId: '', at: AT + 1000, transcript: '', kind: 'voice', removed: true },
    { seq: 3, messageId: 'v3', senderId: BUDI, at: AT + 2000, transcript: 'the ferry leaves at noon', kind: 'audio', audioFile: 'audio/3.m4a' },
  ];
  await mkdir(path.join(chat, 'notes'), { recursive: true });
  await writeFile(path.join(chat, 'notes', '000000.json'), JSON.stringify({ version: 1, chatId: GROUP, notes }));
  await writeFile(path.join(chat, 'notes', '000001.json'), '{"version":1,"chatId":"1203630000000000');
  await mkdir(path.join(chat, 'context'), { recursive: true });
  await writeFile(path.join(chat, 'context', '1.json'), JSON.stringify({ before: [{ id: 'c1', senderId: BUDI, at: AT - 5, text: 'the heater is cold again' }], after: [{ id: 'c2', senderId: BUDI, at: AT + 5, text: 'I will call the plumber' }] }));
  await writeFile(path.join(chat, 'context', '3.json'), JSON.stringify({ before: [], after: [] }));
  await mkdir(path.join(chat, 'audio'), { recursive: true });
  await writeFile(path.join(chat, 'audio', '1.ogg'), 'OGG-ANA');
  await writeFile(path.join(chat, 'audio', '3.m4a'), 'M4A-BUDI');
  await writeFile(path.join(chat, 'search-index.json'), JSON.stringify({ chatId: GROUP, format: 'flexsearch-0.8/1', covers: 3, dir: 'index-3-x', keys: ['reg'] }));
  await mkdir(path.join(chat, 'index-3-x'), { recursive: true });
  await writeFile(path.join(chat, 'index-3-x', '0.part'), '{"boiler":1}');
  return chat;
}

/** Every note of the chat as the store database holds it, in the order written (`chat` is its folder under the archive). */
async function lines(chat: string): Promise<Array<Record<string, unknown>>> {
  const text = storedSearchLogText(path.dirname(path.dirname(chat)), 'voice', 'voice-archive', decodeURIComponent(path.basename(chat)));
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('audio archive: the layout of earlier versions is converted to the search log once', () => {
  let dir: string;
  let health: DataHealth;
  let unregister: () => void;
  let said: Array<{ level: string; msg: string }>;
  const log = { info: (_: object, msg: string) => void said.push({ level: 'info', msg }), warn: (_: object, msg: string) => void said.push({ level: 'warn', msg }) };
  beforeEach(async () => {
    dir = path.join(await tempDir('voice-migrate-'), 'audio_archive');
    health = new DataHealth(path.dirname(dir));
    unregister = registerDataHealth(health);
    said = [];
  });
  afterEach(async () => {
    unregister();
    await rm(path.dirname(dir), { recursive: true, force: true });
  });

  it('keeps every note with its number, audio, context and erasure; the damaged segment is set aside and said', async () => {
    const chat = await oldLayout(dir);
    const archive = archiveAt(dir, { log });
    await archive.convertAll();

    const [boiler] = await archive.search(GROUP, 'boiler');
    expect(boiler.note).to.include({ seq: 1, messageId: 'v1', senderId: ANA, senderName: 'Ana', kind: 'voice' });
    expect(await readFile(archive.audioPath(GROUP, boiler.note)!, 'utf8')).to.equal('OGG-ANA');
    const context = await archive.context(GROUP, 1);
    expect(context.before.map((m) => m.text)).to.deep.equal(['the heater is cold again']);
    expect(context.after.map((m) => m.text)).to.deep.equal(['I will call the plumber']);
    const [ferry] = await archive.search(GROUP, 'ferry');
    expect(ferry.note).to.include({ seq: 3, kind: 'audio' });
    expect(await readFile(archive.audioPath(GROUP, ferry.note)!, 'utf8')).to.equal('M4A-BUDI');
    // The erased note is still known as erased (a reply quoting it is told so).
    expect(await archive.noteOf(GROUP, 'v2')).to.include({ seq: 2, removed: true });
    // Two notes held; the erased one is a marker, not counted (its line is checked below).
    expect(await archive.count(GROUP)).to.equal(2);
    // The next note is numbered after the old ones: no audio file is reused.
    expect((await archive.add(GROUP, { messageId: 'v4', senderId: ANA, at: AT + 3000, transcript: 'new note', audio: { bytes: Buffer.from('NEW'), ext: 'ogg' } })).seq).to.equal(4);
    // The audio files are named after their message now (a chat move can never mix two notes' numbered files).
    expect((await readdir(path.join(chat, 'audio'))).sort()).to.deep.equal(['msg-v1.ogg', 'msg-v3.m4a', 'msg-v4.ogg']);
    expect(await readFile(path.join(chat, 'audio', 'msg-v1.ogg'), 'utf8')).to.equal('OGG-ANA');
    expect(said.some((s) => s.level === 'info' && /named 2 audio file/.test(s.msg))).to.equal(true);

    // The old files are gone, except the damaged segment: set aside with its bytes, told to the data health and the log.
    expect(existsSync(path.join(chat, 'context'))).to.equal(false);
    expect(existsSync(path.join(chat, 'search-index.json'))).to.equal(false);
    expect(existsSync(path.join(chat, 'index-3-x'))).to.equal(false);
    const aside = await readdir(path.join(chat, 'notes'));
    expect(aside).to.have.length(1);
    expect(aside[0]).to.match(/^000001\.json\.corrupt-\d+$/);
    expect(await readFile(path.join(chat, 'notes', aside[0]), 'utf8')).to.equal('{"version":1,"chatId":"1203630000000000');
    expect(health.setAside.map((p) => path.basename(p.file))).to.deep.equal(['000001.json']);
    expect(said.some((s) => s.level === 'warn' && /set aside/.test(s.msg))).to.equal(true);
    expect(said.some((s) => s.level === 'info' && /converted 3 note/.test(s.msg))).to.equal(true);

    // A restart converts nothing again: each note is on disk once.
    said = [];
    const restarted = archiveAt(dir, { log });
    expect(await restarted.count(GROUP)).to.equal(3);
    expect(said).to.deep.equal([]);
    expect((await lines(chat)).filter((l) => l.seq !== undefined).map((l) => l.seq)).to.deep.equal([1, 2, 3, 4]);
  });

  it("keeps the converted files aside under data/migrated/ until a person's delete makes that copy older than the log", async () => {
    const chat = await oldLayout(dir);
    const { archive, privacy } = voiceArchiveAt(dir, { log });
    // The chat's first use converts it.
    expect(await archive.count(GROUP)).to.equal(2);
    const aside = path.join(path.dirname(dir), 'migrated', 'audio_archive', path.basename(chat));
    expect(await readdir(path.join(aside, 'notes'))).to.deep.equal(['000000.json']);
    expect(await readFile(path.join(aside, 'context', '1.json'), 'utf8')).to.include('the heater is cold again');
    await privacy.deleteFor([ANA]);
    expect(existsSync(aside)).to.equal(false);
  });

  it('keeps that copy while changes take nothing: its numbered audio renamed at conversion, a later message added as a note\'s context', async () => {
    await oldLayout(dir);
    const { archive, privacy } = voiceArchiveAt(dir, { log });
    await archive.convertAll();
    const aside = path.join(path.dirname(dir), 'migrated', 'audio_archive', safeFileName(GROUP));
    expect(said.some((s) => /named 2 audio file/.test(s.msg)), 'the audio was renamed').to.equal(true);
    await archive.add(GROUP, { messageId: 'v4', senderId: BUDI, at: AT + 3000, transcript: 'new note' });
    await archive.observe(GROUP, { id: 'c9', senderId: BUDI, at: AT + 4000, text: 'right after the new note' });
    expect((await archive.context(GROUP, 4)).after.map((m) => m.text)).to.deep.equal(['right after the new note']);
    expect(await readdir(path.join(aside, 'notes'))).to.deep.equal(['000000.json']);
    expect(await readFile(path.join(aside, 'context', '1.json'), 'utf8')).to.include('the heater is cold again');
    // An edit takes the old words: the copy holding them goes.
    await privacy.edit!(GROUP, 'c9', 'edited after', [BUDI]);
    expect(existsSync(aside)).to.equal(false);
  });

  it('converts at start a chat the old layout alone holds, before any use of it: notes in the database, originals kept aside under data/migrated/', async () => {
    const chat = await oldLayout(dir);
    // Not a chat's folder (its name is no chat's file name): left as it is.
    await mkdir(path.join(dir, 'not a chat', 'notes'), { recursive: true });
    await writeFile(path.join(dir, 'not a chat', 'notes', '000000.json'), 'kept');
    const archive = archiveAt(dir, { log });
    await archive.convertAll();

    // Read from the database and the folders alone: nothing of the archive touched the chat since the start.
    expect((await lines(chat)).filter((l) => l.seq !== undefined).map((l) => [l.seq, l.text])).to.deep.equal([
      [1, 'the boiler needs a new valve'],
      [2, ''],
      [3, 'the ferry leaves at noon'],
    ]);
    const aside = path.join(path.dirname(dir), 'migrated', 'audio_archive', path.basename(chat));
    expect(JSON.parse(await readFile(path.join(aside, 'notes', '000000.json'), 'utf8')).notes).to.have.length(3);
    expect(await readFile(path.join(aside, 'context', '1.json'), 'utf8')).to.include('the heater is cold again');
    expect(existsSync(path.join(chat, 'notes', '000000.json'))).to.equal(false);
    expect(existsSync(path.join(chat, 'context'))).to.equal(false);
    expect(said.some((s) => s.level === 'info' && /converted 3 note/.test(s.msg))).to.equal(true);
    expect(await readFile(path.join(dir, 'not a chat', 'notes', '000000.json'), 'utf8')).to.equal('kept');
  });

  it('cut short after the notes were written (old files still there): the next start finishes it without duplicates', async () => {
    const chat = await oldLayout(dir);
    const copy = `${dir}-old`;
    await cp(chat, copy, { recursive: true });
    await archiveAt(dir).convertAll();
    // The crash: the old segment and context files are back, as if removing them had not happened.
    await rm(path.join(chat, 'notes'), { recursive: true, force: true });
    await cp(path.join(copy, 'notes'), path.join(chat, 'notes'), { recursive: true });
    await rm(path.join(chat, 'notes', '000001.json'));
    await cp(path.join(copy, 'context'), path.join(chat, 'context'), { recursive: true });
    await rm(copy, { recursive: true, force: true });

    const restarted = archiveAt(dir);
    expect((await restarted.search(GROUP, 'boiler')).map((h) => h.note.seq)).to.deep.equal([1]);
    expect((await lines(chat)).filter((l) => l.seq !== undefined).map((l) => l.seq)).to.deep.equal([1, 2, 3]);
    expect(existsSync(path.join(chat, 'context'))).to.equal(false);
    expect(existsSync(path.join(chat, 'notes'))).to.equal(false);
  });

  it('cut short by an earlier version in the middle of writing the notes (a month file with a torn last line): the next start adds the rest once', async () => {
    const chat = await oldLayout(dir);
    // What a crash of the version that kept month files leaves: the header, the first note, half of the second note's line.
    const first = { id: 'v1', seq: 1, senderId: ANA, senderName: 'Ana', text: 'the boiler needs a new valve', at: AT, kind: 'voice', audioFile: 'audio/1.ogg' };
    const second = JSON.stringify({ id: 'v2', seq: 2, senderId: '', text: '', at: AT + 1000, kind: 'voice', removed: true });
    await writeFile(path.join(chat, '2025-03.jsonl'), `${JSON.stringify({ 'voice-archive': 1, chat: GROUP })}\n${JSON.stringify(first)}\n${second.slice(0, 20)}`);

    const restarted = archiveAt(dir);
    expect(await restarted.count(GROUP)).to.equal(2);
    expect((await restarted.search(GROUP, 'boiler')).map((h) => h.note.seq)).to.deep.equal([1]);
    expect((await restarted.search(GROUP, 'ferry')).map((h) => h.note.seq)).to.deep.equal([3]);
    expect((await restarted.noteOf(GROUP, 'v2'))?.removed).to.equal(true);
    expect((await lines(chat)).filter((l) => l.seq !== undefined).map((l) => l.seq)).to.deep.equal([1, 2, 3]);
    expect(await archiveAt(dir).count(GROUP)).to.equal(2);
  });
});

describe('audio archive: the old layout at the bot\'s start', () => {
  it('is converted at start, before any message of that chat, and its originals kept aside under data/migrated/', async () => {
    const root = await tempDir('voice-start-');
    const chat = await oldLayout(path.join(root, 'data', 'audio_archive'));
    const t = await startTestBot(createVoicePlugin(), { dir: root });
    try {
      await t.until(() => t.logs().some((l) => /converted 3 note/.test(String(l.msg))));
    } finally {
      await t.stop();
    }
    expect((await lines(chat)).filter((l) => l.seq !== undefined).map((l) => l.seq)).to.deep.equal([1, 2, 3]);
    const aside = path.join(root, 'data', 'migrated', 'audio_archive', path.basename(chat));
    expect(await readdir(path.join(aside, 'notes'))).to.deep.equal(['000000.json']);
    expect(await readFile(path.join(aside, 'context', '1.json'), 'utf8')).to.include('the heater is cold again');
    await rm(root, { recursive: true, force: true });
  });
});
