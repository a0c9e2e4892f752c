import { expect } from 'chai';
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { detectJailSupport } from '../../../core/services/jail/support.js';
import { tempDir } from '../../helpers/checkout.js';

/*
 * The start log says what the jail lacks (fail loud): bubblewrap itself, or a bubblewrap that cannot make a sandbox
 * here. A working one is found with one child process (each spawn holds a start's event loop until it has started).
 */
describe('jail support: the start names what is missing, and a working sandbox costs one child process', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir();
    // The sandbox probe runs as the jail's uid when the service is root: it must reach the stand-in program.
    await chmod(dir, 0o755);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('no bubblewrap: says it is unavailable', async () => {
    const support = await detectJailSupport({ uid: 65534, gid: 65534, bwrap: path.join(dir, 'no-bwrap') });
    if (!support.bwrap.ok && /prlimit|setpriv/.test(support.bwrap.reason)) return; // this machine lacks util-linux first
    expect(support.bwrap).to.deep.equal({ ok: false, reason: `bubblewrap unavailable: ${path.join(dir, 'no-bwrap')} not found` });
  });

  it('a bubblewrap that answers its version but cannot make a sandbox: names its version and the cause', async () => {
    const bwrap = path.join(dir, 'bwrap');
    await writeFile(bwrap, '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "bubblewrap 9.9.9"; exit 0; fi\necho "creating new namespace failed: Operation not permitted" >&2\nexit 1\n');
    await chmod(bwrap, 0o755);
    const support = await detectJailSupport({ uid: 65534, gid: 65534, bwrap });
    if (!support.bwrap.ok && /prlimit|setpriv/.test(support.bwrap.reason)) return;
    expect(support.bwrap).to.deep.equal({ ok: false, reason: 'bubblewrap 9.9.9 cannot make a sandbox here (creating new namespace failed: Operation not permitted); user namespaces may be forbidden' });
  });

  it('a bubblewrap that makes a sandbox: its version, from one child process (the sandbox runs bubblewrap --version)', async () => {
    const bwrap = path.join(dir, 'bwrap');
    const calls = path.join(dir, 'calls');
    await writeFile(calls, '');
    await chmod(calls, 0o666);
    // A stand-in that "makes a sandbox" by running what follows its last option (after `--dev /dev`).
    await writeFile(
      bwrap,
      `#!/bin/sh\necho "$*" >> ${calls}\nif [ "$1" = "--version" ]; then echo "bubblewrap 9.9.9"; exit 0; fi\nwhile [ "$1" != "--dev" ]; do shift; done\nshift 2\nexec "$@"\n`,
    );
    await chmod(bwrap, 0o755);
    const support = await detectJailSupport({ uid: 65534, gid: 65534, bwrap });
    if (!support.bwrap.ok && /prlimit|setpriv/.test(support.bwrap.reason)) return;
    expect(support.bwrap).to.deep.equal({ ok: true, version: '9.9.9' });
    const lines = (await readFile(calls, 'utf8')).trim().split('\n');
    // The sandbox's own line, then the version asked inside it: nothing spawned beside it.
    expect(lines).to.have.length(2);
    expect(lines[0]).to.match(/^--unshare-all .*--dev \/dev .*bwrap --version$/);
    expect(lines[1]).to.equal('--version');
  });
});
