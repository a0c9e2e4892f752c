import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AppendHandles } from '../../../core/services/store/append-handles.js';
import { writeFileAtomicSafe } from '../../../core/services/store/atomic.js';
import { ROOT, tempDir } from '../../helpers/checkout.js';

/** The files under `dir` this process holds open right now (Linux: /proc/self/fd). */
async function openFilesUnder(dir: string): Promise<string[]> {
  const fds = await readdir('/proc/self/fd');
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return targets.filter((t) => t.startsWith(dir + path.sep)).map((t) => path.relative(dir, t)).sort();
}

/** Appends two 60-byte lines through AppendHandles in a child whose file size limit is 100 bytes. */
const SHORT_WRITER = `
const { AppendHandles } = await import(${JSON.stringify(path.join(ROOT, 'dist', 'core', 'services', 'store', 'append-handles.js'))});
const handles = new AppendHandles(4);
const file = process.argv[2];
const result = {};
handles.append(file, 'a'.repeat(59) + '\\n');
try {
  handles.append(file, 'b'.repeat(59) + '\\n');
  result.second = 'ok';
} catch (err) {
  result.second = err.code;
}
result.open = handles.size;
process.stdout.write(JSON.stringify(result));
`;

describe('store: append handles at their limits', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('a line only part of which fits (the file system takes 40 of 60 bytes) throws instead of passing for written, and drops the handle', async function () {
    this.timeout(10000);
    const script = path.join(dir, 'short-writer.mjs');
    await writeFile(script, SHORT_WRITER);
    const file = path.join(dir, 'log.jsonl');
    // RLIMIT_FSIZE makes the kernel accept only the bytes below the limit (a short write), then refuse (EFBIG), like
    // a disk that fills up in the middle of a line. Node ignores the SIGXFSZ that comes with it.
    const run = spawnSync('prlimit', ['--fsize=100', process.execPath, script, file], { encoding: 'utf8' });
    if (run.error) throw new Error(`prlimit (util-linux) is needed for this test: ${run.error.message}`);
    expect(run.status, run.stderr).to.equal(0);
    expect(JSON.parse(run.stdout)).to.deep.equal({ second: 'EFBIG', open: 0 });
    expect((await readFile(file)).length).to.equal(100);
  });

  it('the least recently used log is the one closed when the limit is reached, so the busiest chat keeps its handle', async () => {
    const handles = new AppendHandles(2);
    const [a, b, c] = ['a', 'b', 'c'].map((n) => path.join(dir, `${n}.jsonl`));
    handles.append(a, '1\n');
    handles.append(b, '1\n');
    handles.append(a, '2\n');
    handles.append(c, '1\n');
    expect(await openFilesUnder(dir)).to.deep.equal(['a.jsonl', 'c.jsonl']);
    handles.releaseAll();
    expect(await openFilesUnder(dir)).to.deep.equal([]);
    expect(await readFile(a, 'utf8')).to.equal('1\n2\n');
  });

  it('atomic writes leave no descriptor open, and the file they wrote is whole', async () => {
    const file = path.join(dir, 'doc', 'state.json');
    for (let i = 0; i < 20; i++) await writeFileAtomicSafe(file, JSON.stringify({ i }));
    expect(await openFilesUnder(dir)).to.deep.equal([]);
    expect(JSON.parse(await readFile(file, 'utf8'))).to.deep.equal({ i: 19 });
    expect(await readdir(path.join(dir, 'doc'))).to.deep.equal(['state.json']);
  });

  it('an atomic write whose folder was removed meanwhile (a restore) creates it again', async () => {
    const file = path.join(dir, 'memory', 'chat.json');
    await writeFileAtomicSafe(file, '{"facts":[]}');
    await rm(path.join(dir, 'memory'), { recursive: true });
    await writeFileAtomicSafe(file, '{"facts":["likes tea"]}');
    expect(JSON.parse(await readFile(file, 'utf8'))).to.deep.equal({ facts: ['likes tea'] });
  });
});
