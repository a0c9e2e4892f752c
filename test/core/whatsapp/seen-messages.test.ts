import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SeenMessages } from '../../../core/adapters/whatsapp/seen-messages.js';
import { storedDocuments } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

/*
 * The keys of the messages handled lately live in the store database: a message WhatsApp delivers again after a
 * restart (or after an upgrade from the version that kept them in whatsapp/seen-messages.json) gets no second answer.
 */
describe('WhatsApp: the messages handled lately, in the store', () => {
  const folder = storeFolderPerTest({ prefix: 'seen-messages-' });

  it('takes in the file of the earlier version once: a message handled before the upgrade is not handled again', async () => {
    await mkdir(path.join(folder.dir, 'whatsapp'), { recursive: true });
    await writeFile(path.join(folder.dir, 'whatsapp', 'seen-messages.json'), JSON.stringify({ version: 1, keys: ['c@g.us|m1|p@s.whatsapp.net'] }));
    const seen = new SeenMessages(folder.dir);
    expect(await seen.firstTime('c@g.us', 'm1', 'p@s.whatsapp.net')).to.equal(false);
    expect(await seen.firstTime('c@g.us', 'm2', 'p@s.whatsapp.net')).to.equal(true);
    await seen.flush();
    expect(existsSync(path.join(folder.dir, 'whatsapp', 'seen-messages.json')), 'the file is kept aside, not read again').to.equal(false);
    expect(storedDocuments(folder.dir, 'whatsapp', 'seen-messages')['']?.keys).to.deep.equal(['c@g.us|m1|p@s.whatsapp.net', 'c@g.us|m2|p@s.whatsapp.net']);
  });

  it('survives a restart, and keeps only the most recent keys (the oldest go first)', async () => {
    const first = new SeenMessages(folder.dir, 2);
    for (const id of ['a', 'b', 'c']) expect(await first.firstTime('c@g.us', id)).to.equal(true);
    await first.flush();
    const restarted = new SeenMessages(folder.dir, 2);
    expect(await restarted.firstTime('c@g.us', 'c')).to.equal(false);
    expect(await restarted.firstTime('c@g.us', 'b')).to.equal(false);
    expect(await restarted.firstTime('c@g.us', 'a'), 'past the capacity: forgotten').to.equal(true);
  });
});
