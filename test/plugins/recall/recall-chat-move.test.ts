import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { safeFileName } from '../../../core/index.js';
import { closeDatabase } from '../../../core/services/store/database.js';
import { RecallStore, type LoggedMessage } from '../../../plugins/recall/log-store.js';
import { storeDatabaseText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

const LID = '98765432100001@lid';
const PHONE = '6281211110000@s.whatsapp.net';
const NOV = Date.UTC(2026, 10, 3, 12);
const DEC = Date.UTC(2026, 11, 3, 12);

const said = (text: string, at: number, id = `m-${text.replace(/\W/g, '')}`): LoggedMessage => ({ id, role: 'user', senderId: PHONE, text, at });

const textsOf = (hits: Array<{ message: LoggedMessage }>) => hits.map((h) => h.message.text);

describe('recall log: a private chat moving from its LID to its phone id', function () {
  this.timeout(20_000);
  const data = storeFolderPerTest({ prefix: 'recall-move-', inside: 'data' });
  let root: string;
  beforeEach(() => {
    root = path.join(data.dir, 'recall');
  });

  it('takes every message along: found under the phone id, nothing left under the LID, after a restart too', async () => {
    const logs = new RecallStore(root);
    await logs.chat(LID).addMany([said('the gate code is 4412', NOV), said('the gate is blue', DEC)]);
    assert.equal((await logs.chat(LID).search('gate')).length, 2);
    await logs.moveChat(LID, PHONE);

    assert.deepEqual(textsOf(await logs.chat(PHONE).search('gate')), ['the gate is blue', 'the gate code is 4412']);
    assert.deepEqual(await logs.chat(LID).search('gate'), []);
    assert.deepEqual(await logs.chatIds(), [PHONE]);
    assert.doesNotMatch(await storeDatabaseText(data.dir), new RegExp(LID.split('@')[0]), 'the LID is nowhere in the database file or its WAL');
    // A line written after the move goes under the phone id only.
    await logs.chat(PHONE).add(said('the gate opens at six', DEC + 1000));
    closeDatabase(data.dir);

    const again = new RecallStore(root);
    assert.deepEqual(textsOf(await again.chat(PHONE).search('gate')), ['the gate opens at six', 'the gate is blue', 'the gate code is 4412']);
    assert.deepEqual(await again.chatIds(), [PHONE]);
  });

  it('lines still waiting for their write (not yet on disk) move too', async () => {
    const logs = new RecallStore(root);
    logs.chat(LID).addSoon(said('the parcel is at the neighbour', NOV), 60_000);
    await logs.moveChat(LID, PHONE);
    closeDatabase(data.dir);
    assert.deepEqual(textsOf(await new RecallStore(root).chat(PHONE).search('parcel')), ['the parcel is at the neighbour']);
  });

  it('onto a chat that has a log already: both kept, one log in time order', async () => {
    const logs = new RecallStore(root);
    await logs.chat(PHONE).addMany([said('first under the phone', NOV), said('third under the phone', NOV + 3000)]);
    await logs.chat(LID).addMany([said('second under the lid', NOV + 2000), said('fourth under the lid', NOV + 4000)]);
    await logs.chat(PHONE).search('phone');
    await logs.moveChat(LID, PHONE);

    assert.deepEqual((await logs.chat(PHONE).where(() => true)).map((m) => m.text), ['first under the phone', 'second under the lid', 'third under the phone', 'fourth under the lid']);
    closeDatabase(data.dir);
    for (const store of [logs, new RecallStore(root)]) {
      assert.deepEqual(textsOf(await store.chat(PHONE).search('under')), ['fourth under the lid', 'third under the phone', 'second under the lid', 'first under the phone']);
      assert.deepEqual(textsOf(await store.chat(PHONE).search('lid')), ['fourth under the lid', 'second under the lid']);
      // The message before and after follow the merged order.
      const [hit] = await store.chat(PHONE).search('second');
      assert.deepEqual([hit.before?.text, hit.after?.text], ['first under the phone', 'third under the phone']);
    }
  });

  it('announced twice (the transport says it again after a restart), nothing is taken twice; equal texts with their own ids stay two', async () => {
    const logs = new RecallStore(root);
    await logs.chat(PHONE).add(said('the meeting is at noon', NOV));
    await logs.chat(LID).addMany([said('the meeting room is 4B', NOV + 1000), said('the meeting room is 4B', NOV + 1000, 'm-twice'), said('bring the slides', DEC)]);
    await logs.moveChat(LID, PHONE);
    closeDatabase(data.dir);
    const restarted = new RecallStore(root);
    await restarted.moveChat(LID, PHONE);
    assert.deepEqual((await restarted.chat(PHONE).where(() => true)).map((m) => m.text), ['the meeting is at noon', 'the meeting room is 4B', 'the meeting room is 4B', 'bring the slides']);
  });

  it("files in the LID's folder move along with their bytes, and the LID's folder goes", async () => {
    const logs = new RecallStore(root);
    await logs.chat(LID).add(said('kept words', NOV));
    await mkdir(path.join(root, safeFileName(LID), 'notes'), { recursive: true });
    await writeFile(path.join(root, safeFileName(LID), 'notes', 'odd.bin'), 'odd bytes');
    await logs.moveChat(LID, PHONE);
    assert.deepEqual(await readdir(root), [safeFileName(PHONE)]);
    assert.equal(await readFile(path.join(root, safeFileName(PHONE), 'notes', 'odd.bin'), 'utf8'), 'odd bytes');
    assert.deepEqual(textsOf(await logs.chat(PHONE).search('kept')), ['kept words']);
  });
});
