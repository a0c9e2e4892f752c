import { DataWriteError } from '../../../core/api/errors.js';
import { expect } from 'chai';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createLogger } from '../../../core/services/log/logger.js';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { JsonFile } from '../../../core/services/store/json-file.js';
import { HISTORY_SCHEMA } from '../../../core/services/store/schemas.js';
import { tempDir } from '../../helpers/checkout.js';

describe('failed writes are never silent', () => {
  let dir: string;
  let lines: Array<Record<string, any>>;
  let notices: string[];
  let health: DataHealth;
  beforeEach(async () => {
    dir = await tempDir();
    lines = [];
    notices = [];
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l))));
    health = new DataHealth(dir, createLogger({ level: 'debug', pretty: false, destination: sink }), () => ({
      raise: (key, text) => notices.push(`raise ${key}: ${text}`),
      recover: (key, text) => notices.push(`recover ${key}: ${text}`),
    }));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('keeps the change, logs once per file, tells the owners once, rejects flush, and recovers on the next try', async () => {
    const a = new JsonFile(path.join(dir, 'history', 'a.json'), () => ({ messages: [] as unknown[] }), { schema: HISTORY_SCHEMA, health, coalesceMs: 1 });
    const b = new JsonFile(path.join(dir, 'history', 'b.json'), () => ({ messages: [] as unknown[] }), { schema: HISTORY_SCHEMA, health, coalesceMs: 1 });
    await Promise.all([a.get(), b.get()]);
    // A file where the folder should be: every write into it fails (as on a full or read-only disk).
    await writeFile(path.join(dir, 'history'), 'not a folder');
    for (let i = 0; i < 3; i++) {
      await a.update((d) => void d.messages.push({ role: 'user', text: `a${i}`, at: i }));
      const error = await a.flush().then(() => undefined, (e: unknown) => e);
      expect(error).to.be.instanceOf(DataWriteError);
      expect((error as DataWriteError).files).to.deep.equal([a.file]);
    }
    await b.update((d) => void d.messages.push({ role: 'user', text: 'b0', at: 0 }));
    await b.flush().catch(() => undefined);
    expect(lines.filter((l) => l.level === 50 && l.file === a.file)).to.have.length(1);
    expect(lines.filter((l) => l.level === 50 && l.file === b.file)).to.have.length(1);
    expect(notices.filter((n) => n.startsWith('raise data-write'))).to.have.length(1);
    expect(health.unsaved().map((u) => u.file).sort()).to.deep.equal([a.file, b.file].sort());

    // The disk is fixed: the next flush writes everything that was kept in memory.
    await rm(path.join(dir, 'history'));
    await mkdir(path.join(dir, 'history'));
    await a.flush();
    expect(notices.filter((n) => n.startsWith('recover'))).to.have.length(0);
    await b.flush();
    expect(notices.filter((n) => n.startsWith('recover data-write'))).to.have.length(1);
    expect(JSON.parse(await readFile(a.file, 'utf8')).messages.map((m: { text: string }) => m.text)).to.deep.equal(['a0', 'a1', 'a2']);
    expect(health.unsaved()).to.deep.equal([]);
    expect((await readdir(path.join(dir, 'history'))).filter((n) => n.includes('.tmp-'))).to.deep.equal([]);
  });
});
