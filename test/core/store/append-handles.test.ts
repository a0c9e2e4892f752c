import { expect } from 'chai';
import { readFile, rm, truncate } from 'node:fs/promises';
import path from 'node:path';
import { AppendHandles } from '../../../core/services/store/append-handles.js';
import { appendToFile, releaseAppendHandle, writeFileAtomicSafe } from '../../../core/services/store/atomic.js';
import { tempDir } from '../../helpers/checkout.js';

describe('store: kept-open append handles of the logs', () => {
  it('appends in order through one handle, creating the folder, and keeps appending after a truncate', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'history', 'chat.jsonl');
    const handles = new AppendHandles(4);
    handles.append(file, 'one\n');
    handles.append(file, 'two\n');
    expect(await readFile(file, 'utf8')).to.equal('one\ntwo\n');
    // Compaction empties the log by truncating it: the open handle must write at the new end, not at byte 8.
    await truncate(file, 0);
    handles.append(file, 'three\n');
    expect(await readFile(file, 'utf8')).to.equal('three\n');
    expect(handles.size).to.equal(1);
  });

  it('never keeps more than `max` handles open, and a closed one reopens by name without losing a line', async () => {
    const dir = await tempDir();
    const handles = new AppendHandles(2);
    const files = ['a', 'b', 'c'].map((n) => path.join(dir, `${n}.jsonl`));
    for (const file of files) handles.append(file, 'first\n');
    expect(handles.size).to.equal(2);
    // "a" was the least recently used: closed, then reopened for this line.
    for (const file of files) handles.append(file, 'second\n');
    expect(handles.size).to.equal(2);
    for (const file of files) expect(await readFile(file, 'utf8')).to.equal('first\nsecond\n');
  });

  it('after release, a file replaced or removed by its owner gets the next line (not the old, unlinked file)', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'log.jsonl');
    const handles = new AppendHandles(4);
    handles.append(file, 'old\n');
    handles.release(file);
    await writeFileAtomicSafe(file, 'rewritten\n');
    handles.append(file, 'after rewrite\n');
    expect(await readFile(file, 'utf8')).to.equal('rewritten\nafter rewrite\n');
    handles.release(file);
    await rm(file);
    handles.append(file, 'after removal\n');
    expect(await readFile(file, 'utf8')).to.equal('after removal\n');
    handles.releaseAll();
    expect(handles.size).to.equal(0);
  });

  it('a write that fails throws (the caller keeps the change) and drops the handle', async () => {
    const dir = await tempDir();
    const handles = new AppendHandles(4);
    // A folder where the log should be: the file system refuses, and says so.
    expect(() => handles.append(dir, 'line\n')).to.throw(/EISDIR|illegal operation/i);
    expect(handles.size).to.equal(0);
  });

  it('appendToFile: a file replaced by writeFileAtomicSafe, or released and removed, gets the next line', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'recall', '2026-11.jsonl');
    await appendToFile(file, 'a\n');
    await appendToFile(file, 'b\n');
    // A rewrite (a privacy delete, a retention sweep) replaces the file: the next line must land in the new one.
    await writeFileAtomicSafe(file, 'kept\n');
    await appendToFile(file, 'c\n');
    expect(await readFile(file, 'utf8')).to.equal('kept\nc\n');
    releaseAppendHandle(file);
    await rm(file);
    await appendToFile(file, 'd\n');
    expect(await readFile(file, 'utf8')).to.equal('d\n');
  });
});
