import { expect } from 'chai';
import { readdir, readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { BoundedRecord } from '../../../core/services/store/bounded-record.js';
import type { DataSchema } from '../../../core/services/store/schemas.js';
import { everyFileText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

interface Seen {
  id: string;
  chat: string;
  at: number;
}

const SCHEMA: DataSchema = {
  name: 'seen-test',
  version: 1,
  schema: {
    type: 'object',
    required: ['seen'],
    properties: { seen: { type: 'array', items: { type: 'object', required: ['id', 'chat', 'at'], properties: { id: { type: 'string' }, chat: { type: 'string' }, at: { type: 'number' } } } } },
  },
};

const A = '120363000000000001@g.us';
const B = '120363000000000002@g.us';
const DAY = 86_400_000;

describe('a bounded record of ids per chat (a table of the store database, bounded by age and count)', () => {
  const folder = storeFolderPerTest({ prefix: 'bounded-record-' });
  let clock: number;
  beforeEach(() => {
    clock = 10 * DAY;
  });

  const open = (keepCount = 3) =>
    new BoundedRecord<Seen>({
      dataDir: folder.dir,
      file: path.join(folder.dir, 'seen', 'seen.json'),
      field: 'seen',
      schema: SCHEMA,
      chatOf: (e) => e.chat,
      withChat: (e, chat) => ({ ...e, chat }),
      keepMs: DAY,
      keepCount,
      now: () => clock,
    });
  /** What the data folder holds, read by a record opened anew (as after a restart). */
  const onDisk = () => open().entries();

  it('finds an entry only in its own chat, and after a restart', async () => {
    const record = open();
    await record.add([{ id: 'm1', chat: A, at: clock }]);
    expect(await record.get(A, 'm1')).to.deep.equal({ id: 'm1', chat: A, at: clock });
    expect(await record.get(B, 'm1'), 'the same id in another chat').to.equal(undefined);
    await record.flush();
    expect(await open().get(A, 'm1')).to.deep.equal({ id: 'm1', chat: A, at: clock });
  });

  it('keeps the newest keepCount entries; a note made again counts as new', async () => {
    const record = open(3);
    await record.add([1, 2, 3].map((n) => ({ id: `m${n}`, chat: A, at: clock + n })));
    await record.add([{ id: 'm1', chat: A, at: clock + 4 }]);
    await record.add([{ id: 'm5', chat: A, at: clock + 5 }]);
    await record.flush();
    expect((await onDisk()).map((e) => e.id)).to.deep.equal(['m3', 'm1', 'm5']);
    expect(await record.get(A, 'm2'), 'the oldest went').to.equal(undefined);
    expect((await record.get(A, 'm1'))?.at).to.equal(clock + 4);
  });

  it('never returns an entry older than keepMs, and drops it from the file at the next note', async () => {
    const record = open();
    await record.add([{ id: 'old', chat: A, at: clock }]);
    clock += DAY + 1;
    expect(await record.get(A, 'old')).to.equal(undefined);
    await record.add([{ id: 'new', chat: A, at: clock }]);
    await record.flush();
    expect((await onDisk()).map((e) => e.id)).to.deep.equal(['new']);
  });

  it('moves a chat\'s entries (written at once) and removes what is picked', async () => {
    const record = open();
    await record.add([
      { id: 'm1', chat: A, at: clock },
      { id: 'm2', chat: B, at: clock },
    ]);
    await record.moveChat(A, 'moved@s.whatsapp.net');
    expect((await onDisk()).map((e) => e.chat), 'on disk without a flush').to.deep.equal(['moved@s.whatsapp.net', B]);
    expect(await record.get(A, 'm1')).to.equal(undefined);
    expect(await record.get('moved@s.whatsapp.net', 'm1')).to.not.equal(undefined);
    expect(await record.removeWhere((e) => e.chat === B)).to.equal(1);
    expect((await record.entries()).map((e) => e.id)).to.deep.equal(['m1']);
    await record.flush();
    expect((await open().entries()).map((e) => e.id)).to.deep.equal(['m1']);
  });

  it('the JSON file of earlier versions is taken in once, kept aside, and what a removal takes is in no file of data/', async () => {
    await mkdir(path.join(folder.dir, 'seen'), { recursive: true });
    await writeFile(path.join(folder.dir, 'seen', 'seen.json'), JSON.stringify({ seen: [{ id: 'kept-id', chat: A, at: clock }, { id: 'removed-id', chat: B, at: clock }] }));
    const record = open();
    expect((await record.entries()).map((e) => e.id)).to.deep.equal(['kept-id', 'removed-id']);
    expect(await readdir(path.join(folder.dir, 'seen'))).to.deep.equal([]);
    expect(await readFile(path.join(folder.dir, 'migrated', 'seen', 'seen.json'), 'utf8')).to.include('removed-id');
    expect((await open().entries()).map((e) => e.id), 'not taken in twice').to.deep.equal(['kept-id', 'removed-id']);
    expect(await record.removeWhere((e) => e.chat === B)).to.equal(1);
    const text = await everyFileText(folder.dir, 'latin1');
    expect(text).not.to.include('removed-id');
    expect(text).to.include('kept-id');
  });

  it('a file that breaks its schema is set aside with its bytes kept, and the record starts empty', async () => {
    await mkdir(path.join(folder.dir, 'seen'), { recursive: true });
    await writeFile(path.join(folder.dir, 'seen', 'seen.json'), JSON.stringify({ seen: [{ id: 7 }] }));
    const record = open();
    expect(await record.entries()).to.deep.equal([]);
    const names = await readdir(path.join(folder.dir, 'seen'));
    const aside = names.find((n) => n.startsWith('seen.json.corrupt-'));
    expect(aside, names.join(', ')).to.be.a('string');
    expect(await readFile(path.join(folder.dir, 'seen', aside!), 'utf8')).to.equal(JSON.stringify({ seen: [{ id: 7 }] }));
  });
});
