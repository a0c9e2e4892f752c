import assert from 'node:assert/strict';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { safeFileName } from '../../../core/storage.js';
import { RecallStore, type LoggedMessage } from '../../../plugins/recall/log-store.js';

const LID = '98765432100001@lid';
const PHONE = '6281211110000@s.whatsapp.net';
const NOV = Date.UTC(2026, 10, 3, 12);
const DEC = Date.UTC(2026, 11, 3, 12);

const said = (text: string, at: number, id = `m-${text.replace(/\W/g, '')}`): LoggedMessage => ({ id, role: 'user', senderId: PHONE, text, at });

/** Every line of every month file of a chat's folder (headers included), file by file. */
async function filesOf(root: string, chatId: string): Promise<Record<string, string>> {
  const dir = path.join(root, safeFileName(chatId));
  const out: Record<string, string> = {};
  for (const name of await readdir(dir).catch(() => [] as string[])) out[name] = await readFile(path.join(dir, name), 'utf8');
  return out;
}

const textsOf = (hits: Array<{ message: LoggedMessage }>) => hits.map((h) => h.message.text);

describe('recall log: a private chat moving from its LID to its phone id', function () {
  this.timeout(20_000);
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'recall-move-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('takes every message along: found under the phone id, nothing left under the LID, after a restart too', async () => {
    const logs = new RecallStore(root);
    await logs.chat(LID).addMany([said('the gate code is 4412', NOV), said('the gate is blue', DEC)]);
    assert.equal((await logs.chat(LID).search('gate')).length, 2, 'loaded before the move (its memory must not survive it)');
    await logs.moveChat(LID, PHONE);

    assert.deepEqual(textsOf(await logs.chat(PHONE).search('gate')), ['the gate is blue', 'the gate code is 4412']);
    assert.deepEqual(await readdir(root), [safeFileName(PHONE)], 'the LID folder is gone');
    assert.deepEqual(await logs.chat(LID).search('gate'), []);
    // A line written after the move goes under the phone id only.
    await logs.chat(PHONE).add(said('the gate opens at six', DEC + 1000));
    await logs.flush();
    assert.deepEqual(await readdir(root), [safeFileName(PHONE)]);

    const again = new RecallStore(root);
    assert.deepEqual(textsOf(await again.chat(PHONE).search('gate')), ['the gate opens at six', 'the gate is blue', 'the gate code is 4412']);
    const files = await filesOf(root, PHONE);
    assert.match(files['2026-11.jsonl'], new RegExp(`^{"recall":1,"chat":"${PHONE}"}\\n`), "the header names the phone id (a file naming another chat is never read)");
  });

  it('lines still waiting for their write (not yet on disk) move too', async () => {
    const logs = new RecallStore(root);
    logs.chat(LID).addSoon(said('the parcel is at the neighbour', NOV), 60_000);
    await logs.moveChat(LID, PHONE);
    assert.deepEqual(await readdir(root), [safeFileName(PHONE)]);
    assert.deepEqual(textsOf(await new RecallStore(root).chat(PHONE).search('parcel')), ['the parcel is at the neighbour']);
  });

  it('onto a chat that has a log already: both kept, one log in time order, the old search index not reused', async () => {
    const logs = new RecallStore(root, {}, { snapshotMinLines: 1 });
    await logs.chat(PHONE).addMany([said('first under the phone', NOV), said('third under the phone', NOV + 3000)]);
    await logs.chat(LID).addMany([said('second under the lid', NOV + 2000), said('fourth under the lid', NOV + 4000)]);
    await logs.chat(PHONE).search('phone');
    await logs.flush(); // writes the phone month's index snapshot (it must not survive the merge)
    await logs.moveChat(LID, PHONE);

    const lines = (await filesOf(root, PHONE))['2026-11.jsonl'].split('\n').slice(1, -1).map((l) => (JSON.parse(l) as LoggedMessage).text);
    assert.deepEqual(lines, ['first under the phone', 'second under the lid', 'third under the phone', 'fourth under the lid']);
    for (const store of [logs, new RecallStore(root, {}, { snapshotMinLines: 1 })]) {
      assert.deepEqual(textsOf(await store.chat(PHONE).search('under')), ['fourth under the lid', 'third under the phone', 'second under the lid', 'first under the phone']);
      assert.deepEqual(textsOf(await store.chat(PHONE).search('lid')), ['fourth under the lid', 'second under the lid']);
      // A search that rebuilt a large month writes its snapshot in the background: let it finish before the folder goes.
      await store.flush();
    }
  });

  it('a move cut short by a crash (merged file written, the LID file not removed yet) is finished by the next one without duplicates', async () => {
    const logs = new RecallStore(root);
    await logs.chat(PHONE).add(said('the meeting is at noon', NOV));
    await logs.chat(LID).addMany([said('the meeting room is 4B', NOV + 1000), said('the meeting room is 4B', NOV + 1000, 'm-twice'), said('bring the slides', DEC)]);
    await logs.flush();
    const lidFolder = path.join(root, safeFileName(LID));
    const saved = path.join(root, '..', `${path.basename(root)}-lid-copy`);
    await cp(lidFolder, saved, { recursive: true });
    await logs.moveChat(LID, PHONE);
    // The crash: the LID's files are back as they were before the move (their removal never happened).
    await cp(saved, lidFolder, { recursive: true });
    await rm(saved, { recursive: true, force: true });

    const restarted = new RecallStore(root);
    await restarted.moveChat(LID, PHONE);
    const files = await filesOf(root, PHONE);
    const texts = Object.values(files).flatMap((f) => f.split('\n').slice(1, -1)).map((l) => (JSON.parse(l) as LoggedMessage).text);
    assert.deepEqual(texts, ['the meeting is at noon', 'the meeting room is 4B', 'the meeting room is 4B', 'bring the slides'], 'each message once (two equal texts with their own ids stay two)');
    assert.deepEqual(await readdir(root), [safeFileName(PHONE)]);
  });

  it('a move cut short between months: the months already moved are not taken twice, the others follow', async () => {
    const logs = new RecallStore(root);
    await logs.chat(LID).addMany([said('november words', NOV), said('december words', DEC)]);
    await logs.flush();
    // As if the crash came after November moved: November merged under the phone id and gone from the LID.
    const lidDir = path.join(root, safeFileName(LID));
    const phoneDir = path.join(root, safeFileName(PHONE));
    const november = await readFile(path.join(lidDir, '2026-11.jsonl'), 'utf8');
    await cp(lidDir, phoneDir, { recursive: true });
    await writeFile(path.join(phoneDir, '2026-11.jsonl'), november.replace(LID, PHONE));
    await rm(path.join(phoneDir, '2026-12.jsonl'));
    await rm(path.join(lidDir, '2026-11.jsonl'));

    await new RecallStore(root).moveChat(LID, PHONE);
    const store = new RecallStore(root);
    assert.deepEqual(textsOf(await store.chat(PHONE).search('words')), ['december words', 'november words']);
    assert.deepEqual(await readdir(root), [safeFileName(PHONE)]);
  });

  it('a LID file set aside as corrupt moves along with its bytes', async () => {
    const logs = new RecallStore(root);
    await logs.chat(LID).add(said('kept words', NOV));
    await logs.flush();
    await writeFile(path.join(root, safeFileName(LID), '2026-12.jsonl'), 'not a header\n{"role":"user","text":"odd bytes","at":1}\n');
    await new RecallStore(root).moveChat(LID, PHONE);
    assert.deepEqual(await readdir(root), [safeFileName(PHONE)]);
    const files = await filesOf(root, PHONE);
    const aside = Object.keys(files).find((n) => n.startsWith('2026-12.jsonl.corrupt-'));
    assert.ok(aside, Object.keys(files).join(', '));
    assert.match(files[aside], /odd bytes/);
  });
});
