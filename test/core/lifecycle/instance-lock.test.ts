import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { acquireInstanceLock, InstanceLockedError, readInstanceLock } from '../../../core/services/lifecycle/instance-lock.js';
import { startLiveChat } from '../../helpers/live-chat.js';
import { runChat, tempDir, writeConfig } from '../../helpers/checkout.js';

const DEAD_UPSTREAM = { API_KEY: 'x', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' };

describe('one instance per data folder', () => {
  it('refuses a second `npm run chat` on the same folder, naming the folder and the pid, while the first keeps answering', async () => {
    const dir = await tempDir();
    await writeConfig(dir);
    const first = startLiveChat({ cwd: dir, env: DEAD_UPSTREAM });
    try {
      await first.waitForLog(/console chat ready/);
      first.send('.ping');
      await first.waitForLine(/^bot> pong/);

      const second = await runChat('.ping\n', { cwd: dir, env: DEAD_UPSTREAM });
      expect(second.code).to.not.equal(0);
      expect(second.lines).to.deep.equal([]);
      expect(second.stderr).to.include(`pid ${first.child.pid}`);
      expect(second.stderr).to.include(path.join(dir, 'data'));
      expect(second.stderr).to.match(/already running/);

      first.send('.ping');
      await first.waitForLine(/^bot> pong/, { from: 1 });
      first.child.stdin.end();
      expect((await first.exited).code).to.equal(0);
      // A clean exit leaves no lock behind.
      expect(await readInstanceLock(path.join(dir, 'data'))).to.equal(undefined);
      expect(existsSync(path.join(dir, 'data', '.instance.lock'))).to.equal(false);
    } finally {
      first.child.kill('SIGKILL');
    }
  });

  it('recovers at once the lock of a process killed with kill -9', async function () {
    this.timeout(60_000); // two spawned consoles, one after the other
    const dir = await tempDir();
    await writeConfig(dir);
    const dataDir = path.join(dir, 'data');
    const first = startLiveChat({ cwd: dir, env: DEAD_UPSTREAM });
    await first.waitForLog(/console chat ready/);
    expect(await readInstanceLock(dataDir)).to.deep.include({ pid: first.child.pid });
    first.child.kill('SIGKILL');
    await first.exited;
    expect(existsSync(path.join(dataDir, '.instance.lock')), 'the killed process left its lock').to.equal(true);
    expect(await readInstanceLock(dataDir)).to.equal(undefined);

    const next = await runChat('.ping\n', { cwd: dir, env: DEAD_UPSTREAM });
    expect(next.stderr).to.not.match(/already running/);
    expect(next.code).to.equal(0);
    expect(next.lines).to.have.length(1);
    expect(next.lines[0]).to.match(/^bot> pong/);
  });

  it('in one process: a second take is refused until the first is released', async () => {
    const dataDir = path.join(await tempDir(), 'data');
    await mkdir(dataDir);
    const release = await acquireInstanceLock(dataDir);
    try {
      const err = await acquireInstanceLock(dataDir).then(() => undefined, (e: unknown) => e);
      expect(err).to.be.instanceOf(InstanceLockedError);
      expect((err as Error).message).to.include(dataDir).and.include(`pid ${process.pid}`);
      expect(await readInstanceLock(dataDir)).to.deep.include({ pid: process.pid });
    } finally {
      await release();
    }
    expect(await readInstanceLock(dataDir)).to.equal(undefined);
    const again = await acquireInstanceLock(dataDir);
    await again();
  });
});
