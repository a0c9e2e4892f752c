import { DataWriteError } from '../../../core/api/errors.js';
import { expect } from 'chai';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createLogger } from '../../../core/services/log/logger.js';
import { DataHealth } from '../../../core/services/store/data-health.js';
import { domainFor, registerDataHealth } from '../../../core/services/store/data-domain.js';
import { closeDatabase, databaseFor } from '../../../core/services/store/database.js';
import { HISTORY_SCHEMA } from '../../../core/services/store/schemas.js';
import { SqlDocs } from '../../../core/services/store/sql-docs.js';
import { storedDocuments } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

describe('failed writes are never silent', () => {
  let lines: Array<Record<string, any>>;
  let notices: string[];
  let health: DataHealth;
  let unregister: () => void;
  const folder = storeFolderPerTest({ closing: () => unregister() });
  beforeEach(() => {
    lines = [];
    notices = [];
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l))));
    health = new DataHealth(folder.dir, createLogger({ level: 'debug', pretty: false, destination: sink }), () => ({
      raise: (key, text) => notices.push(`raise ${key}: ${text}`),
      recover: (key, text) => notices.push(`recover ${key}: ${text}`),
    }));
    unregister = registerDataHealth(health);
  });

  it('keeps the change, logs once per document, tells the owners once, rejects flush, and recovers on the next try', async () => {
    const docs = new SqlDocs({ dataDir: folder.dir, namespace: 'test', name: 'chats', perKey: true, where: path.join(folder.dir, 'history'), schema: HISTORY_SCHEMA, initial: () => ({ messages: [] as unknown[] }), domain: domainFor(folder.dir) });
    const a = docs.doc('a');
    const b = docs.doc('b');
    await Promise.all([a.get(), b.get()]);
    // The table gone behind the store's back: every write into it fails (as on a full or read-only disk).
    databaseFor(folder.dir).exec('DROP TABLE "doc:test:chats"');
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

    // The disk is fixed (the database opened anew makes its table again): the next flush writes everything kept in memory.
    closeDatabase(folder.dir);
    await a.flush();
    expect(notices.filter((n) => n.startsWith('recover'))).to.have.length(0);
    await b.flush();
    expect(notices.filter((n) => n.startsWith('recover data-write'))).to.have.length(1);
    expect((storedDocuments(folder.dir, 'test', 'chats').a.messages as Array<{ text: string }>).map((m) => m.text)).to.deep.equal(['a0', 'a1', 'a2']);
    expect(health.unsaved()).to.deep.equal([]);
  });
});
