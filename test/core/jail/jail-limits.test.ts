import { expect } from 'chai';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import * as tarStream from 'tar-stream';
import { Jail, type JailLimits } from '../../../core/services/jail/index.js';
import { receiveWorkTree } from '../../../core/services/jail/work-tree.js';
import { tempDir } from '../../helpers/checkout.js';

const LIMITS: JailLimits = { wallSeconds: 20, cpuSeconds: 20, memoryMb: 256, maxProcesses: 16, maxOutputBytes: 65_536, diskBytes: 1 << 20 };

/**
 * The jail's limits themselves, attacked from inside the real bubblewrap as the jail's unprivileged uid (the tests
 * run as root, where a writable /in would go unnoticed by checking replies only), and its read-back of /work.
 */
describe('jail limits, attacked from inside (real bubblewrap)', function () {
  this.timeout(60_000);
  let jail: Jail;
  before(async function () {
    jail = new Jail();
    // CI installs bubblewrap; a machine without working user namespaces cannot run these attacks at all.
    if (!(await jail.detect()).bwrap.ok) this.skip();
  });

  it('/in is mounted read-only: the jailed program can neither create nor change a file there', async () => {
    const probe = `
import errno, os
print('UID', os.getuid())
def attempt(label, action):
    try:
        action()
        print(label, 'OK')
    except OSError as e:
        print(label, errno.errorcode.get(e.errno, e.errno))
attempt('CREATE', lambda: os.close(os.open('/in/planted.txt', os.O_CREAT | os.O_WRONLY, 0o666)))
attempt('MKDIR', lambda: os.mkdir('/in/planted'))
attempt('REMOVE', lambda: os.unlink('/in/input.txt'))
attempt('RENAME', lambda: os.rename('/in/input.txt', '/in/moved.txt'))
for line in open('/proc/self/mountinfo'):
    fields = line.split()
    if fields[4] == '/in':
        print('MOUNT', fields[5])
print('INPUT', open('/in/input.txt').read())
`;
    const result = await jail.run({ kind: 'code', program: '/usr/bin/python3', args: ['-I', '-c', probe], inputs: { 'input.txt': Buffer.from('the original input') }, limits: LIMITS });
    expect(result.jailed).to.equal(true);
    expect(result.exitCode, result.output).to.equal(0);
    const said = (key: string) => new RegExp(`^${key} (\\S+)$`, 'm').exec(result.stdout)?.[1];
    expect(Number(said('UID')), 'the jailed program is not root').to.not.equal(0);
    // EROFS, not EACCES: the mount itself refuses, whatever the uid and the file's owner and mode.
    for (const attempt of ['CREATE', 'MKDIR', 'REMOVE', 'RENAME']) expect(said(attempt), attempt).to.equal('EROFS');
    expect(said('MOUNT')?.split(',')).to.include('ro');
    expect(result.stdout).to.include('INPUT the original input');
  });

  it('keeps no more output than maxOutputBytes, however it arrives (64 KiB chunks on stdout and stderr)', async () => {
    const flood = `
import os
chunk = b'y' * 65536
while True:
    os.write(1, chunk)
    os.write(2, chunk)
`;
    const cap = 100_000; // not a multiple of the chunks: the chunk that crosses it must be cut
    const result = await jail.run({ kind: 'code', program: '/usr/bin/python3', args: ['-I', '-c', flood], limits: { ...LIMITS, maxOutputBytes: cap } });
    expect(result.stopped).to.equal('output');
    expect(result.truncated).to.equal(true);
    expect(Buffer.byteLength(result.output)).to.equal(cap);
    expect(Buffer.byteLength(result.stdout)).to.be.at.most(cap);
  });
});

describe('reading back a run\'s /work refuses names that climb out', function () {
  let root: string;
  let dir: string;
  beforeEach(async () => {
    root = await tempDir('work-tree-');
    dir = path.join(root, 'workspace');
    await mkdir(dir);
    await writeFile(path.join(dir, 'kept.txt'), 'kept');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  /** A tar stream as the jail's wrapper sends it: the root folder, then the given entries. */
  function hostileTree(names: string[]): PassThrough {
    const pack = tarStream.pack();
    const out = new PassThrough();
    pack.pipe(out);
    pack.entry({ name: './', type: 'directory', mode: 0o755 });
    pack.entry({ name: 'fine.txt', mode: 0o644 }, 'fine');
    for (const name of names) pack.entry({ name, mode: 0o644 }, 'planted by the run');
    pack.finalize();
    return out;
  }

  for (const name of ['a/../../escape.txt', '../escape.txt', 'a/../../../escape.txt', '/escape.txt', 'a/./b.txt']) {
    it(`refuses the whole result for an entry named ${name}, and writes nothing outside`, async () => {
      const received = await receiveWorkTree(hostileTree([name]), dir, { bytes: 1 << 20, entries: 100, depth: 8 });
      expect(received.fits).to.equal(false);
      if (!received.fits) expect(received.reason).to.equal('it made an entry with an unusable name');
      expect((await readdir(root)).sort()).to.deep.equal(['workspace']);
      expect(await readdir(dir)).to.deep.equal(['kept.txt']);
      expect(await readFile(path.join(dir, 'kept.txt'), 'utf8')).to.equal('kept');
      expect(await readdir(path.dirname(root))).to.not.include('escape.txt');
    });
  }
});
