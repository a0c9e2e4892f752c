import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pluginFiles } from '../../../core/kernel/bot/plugin-files.js';
import { tempDir } from '../../helpers/checkout.js';

/*
 * `host.files`, the one door a plugin has to files under DATA_DIR besides the store: folders of its own, never the
 * store database, the WhatsApp session or a place outside the data folder; work folders emptied after a crash.
 */
describe('host.files: folders of a plugin under DATA_DIR, and work folders', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('plugin-files-');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('names folders of its own under DATA_DIR', () => {
    const files = pluginFiles(dir, 'mp3');
    expect(files.folder('generated')).to.equal(path.join(dir, 'generated'));
    expect(files.folder('media/sticker')).to.equal(path.join(dir, 'media', 'sticker'));
  });

  it("refuses a folder outside DATA_DIR or in the core's own places", () => {
    const files = pluginFiles(dir, 'evil');
    for (const name of ['../outside', 'media/../../etc', '/etc', '', 'a//b', './media', 'store.db', 'store.db-wal', 'session_auth', 'session_auth/creds', 'migrated/x', 'work/other', 'logs', '.control', 'media\\..\\..\\etc']) {
      expect(() => files.folder(name), name).to.throw(TypeError, /host\.files\.folder/);
    }
  });

  it('gives each job a private work folder of its own, and empties what a crash left at the first job of a run', async () => {
    const left = path.join(dir, 'work', 'mp3', 'job-crashed');
    await mkdir(left, { recursive: true });
    await writeFile(path.join(left, 'half.mp3'), 'x');
    const files = pluginFiles(dir, 'mp3');
    const [a, b] = await Promise.all([files.work(), files.work()]);
    expect(a.dir).to.not.equal(b.dir);
    expect(path.dirname(a.dir)).to.equal(path.join(dir, 'work', 'mp3'));
    expect((await stat(a.dir)).mode & 0o777).to.equal(0o700);
    expect(existsSync(left), 'the crash leftover is gone').to.equal(false);
    await writeFile(path.join(a.dir, 'out.mp3'), 'y');
    await a.remove();
    expect(existsSync(a.dir)).to.equal(false);
    // A later job of the same run does not empty the folder under a job still running.
    await writeFile(path.join(b.dir, 'running.mp3'), 'z');
    await files.work();
    expect(existsSync(path.join(b.dir, 'running.mp3'))).to.equal(true);
  });
});
