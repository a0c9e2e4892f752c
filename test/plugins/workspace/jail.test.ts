import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { TestBot } from '../../../app/testing/index.js';
import { putFile, sandboxWorks, startWorkspaceApp, texts, USER, workspaceDir } from './helpers.js';
import { memoryLimitNotEnforced } from '../../helpers/memory-limit.js';

/** Every byte below `dir`, at any depth (what really is on disk, unlike a capped walk). */
async function diskBytes(dir: string): Promise<{ bytes: number; deepest: number }> {
  let bytes = 0;
  let deepest = 0;
  const walk = async (current: string, depth: number): Promise<void> => {
    deepest = Math.max(deepest, depth);
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) await walk(full, depth + 1);
      else bytes += (await lstat(full)).size;
    }
  };
  await walk(dir, 0);
  return { bytes, deepest };
}

/**
 * The kernel-enforced limits of a workspace run, attacked for real in bubblewrap (issue 13): disk quota at any
 * depth, memory and processes for the whole run, no nested user namespaces, nothing that names the data folder.
 */
describe('workspace runs in the core jail (real bubblewrap, cgroups)', function () {
  this.timeout(120_000);
  let t: TestBot;
  let dir: string;

  before(async function () {
    // The wall-clock limit is only a safety net here: on a loaded machine the memory probe's forks thrash at the
    // group's limit for over 15 s (22 s seen at load 17) before the kernel's OOM killer ends one.
    t = await startWorkspaceApp({ workspace: { maxOutputBytes: 65536, timeLimitSeconds: 90, cpuSeconds: 15 } });
    if (!sandboxWorks(t)) {
      await t.stop();
      // CI installs bubblewrap; a machine without working user namespaces cannot run these attacks at all.
      this.skip();
    }
    await t.transport.push({ text: '/ws', senderId: USER });
    dir = await workspaceDir(t);
  });
  after(async () => {
    if (sandboxWorks(t)) await t.stop();
  });

  async function run(code: string, name = 'probe.py'): Promise<string> {
    await putFile(dir, name, code);
    const replies = texts(await t.transport.push({ text: `/ws run ${name}`, senderId: USER }));
    expect(replies, 'one reply per run').to.have.length(1);
    return replies[0]!;
  }

  it('a 40-level deep tree over the quota is rejected and removed entirely, and /ws files tells the truth', async () => {
    await putFile(dir, 'keep.txt', 'kept');
    const reply = await run(`
import os
path = '.'
for level in range(40):
    path = os.path.join(path, 'd%d' % level)
os.makedirs(path)
written = 0
for i in range(3):
    try:
        with open(os.path.join(path, 'f%d.bin' % i), 'wb') as f:
            f.write(b'z' * (900 * 1024))
        written += 1
    except OSError as e:
        print('write failed:', e.strerror)
print('WROTE', written)
`);
    expect(reply).to.match(/none of its changes were kept/);
    const onDisk = await diskBytes(dir);
    expect(onDisk.bytes, 'bytes really on disk').to.be.at.most(2 * 1024 * 1024);
    expect(onDisk.deepest, 'deepest folder level on disk').to.be.lessThan(32);
    expect(existsSync(path.join(dir, 'd0'))).to.equal(false);
    const listing = texts(await t.transport.push({ text: '/ws files', senderId: USER }))[0]!;
    expect(listing).to.include('keep.txt').and.to.include('probe.py');
    expect(listing).not.to.include('d0/');
  });

  it('a run within the quota keeps its files, at any depth up to the limit', async () => {
    const reply = await run(`
import os
os.makedirs('a/b/c')
open('a/b/c/result.txt', 'w').write('deep result')
print('done')
`);
    expect(reply).to.match(/exit code 0/);
    expect(reply).not.to.match(/not kept/);
    const show = texts(await t.transport.push({ text: '/ws show a/b/c/result.txt', senderId: USER }))[0]!;
    expect(show).to.include('deep result');
  });

  it('bounds memory for the whole run: 12 forks holding 200 MB each cannot all hold it', async function () {
    // Only where the kernel enforces a cgroup's memory limit at all (checked apart from the jail): skipped, saying
    // why, where it does not, never passed.
    const unenforced = await memoryLimitNotEnforced();
    if (unenforced) {
      this.test!.title += ` — SKIPPED: ${unenforced}`;
      console.warn(`workspace jail memory test skipped: ${unenforced}`);
      this.skip();
    }
    const reply = await run(`
import os, sys, time
children = []
for i in range(12):
    pid = os.fork()
    if pid == 0:
        try:
            block = b'm' * (200 * 1024 * 1024)
            os.write(1, b'HELD\\n')
            time.sleep(1)
        except MemoryError:
            pass
        os._exit(0)
    children.append(pid)
for pid in children:
    try:
        os.waitpid(pid, 0)
    except OSError:
        pass
print('parent done')
`);
    const held = (reply.match(/HELD/g) ?? []).length;
    expect(held, reply).to.be.lessThan(12);
    expect(held * 200, 'MB held at once').to.be.lessThan(600);
    expect(reply).to.match(/ran out of memory \(limit 256 MB\)/);
  });

  it('cannot create a nested user namespace (unshare -U and the unshare call both fail)', async () => {
    const reply = await run(`
import ctypes, subprocess
r = subprocess.run(['unshare', '-U', 'true'], capture_output=True)
print('UNSHARE_CMD', r.returncode)
libc = ctypes.CDLL(None, use_errno=True)
print('UNSHARE_CALL', libc.unshare(0x10000000))
`);
    expect(reply).to.match(/UNSHARE_CMD [1-9]/);
    expect(reply).to.include('UNSHARE_CALL -1');
  });

  it('nothing in /proc names the data folder: /proc/1/cmdline, /proc/self/mountinfo, cgroup, environ', async () => {
    const reply = await run(`
for name in ['/proc/1/cmdline', '/proc/self/mountinfo', '/proc/self/cgroup', '/proc/1/environ', '/proc/self/environ']:
    try:
        print(name, open(name, 'rb').read().replace(b'\\0', b' ').decode('utf8', 'replace'))
    except OSError as e:
        print(name, 'unreadable', e.strerror)
`);
    expect(reply).to.include('/proc/self/mountinfo');
    expect(reply).to.include(' /work ');
    expect(reply).not.to.include(t.dir);
    expect(reply).not.to.include(path.join('data', 'workspaces'));
  });

  it('stops the run as soon as output passes the cap, also when it arrives in exact 64 KiB chunks', async () => {
    const reply = await run(`
import os
chunk = b'y' * 65536
while True:
    os.write(1, chunk)
`);
    expect(reply).to.match(/printed more than 64 KB/);
    expect(reply).not.to.match(/time limit/);
  });
});
