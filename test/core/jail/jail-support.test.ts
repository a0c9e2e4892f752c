import { expect } from 'chai';
import { chmod, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { detectJailSupport } from '../../../core/services/jail/support.js';
import { tempDir } from '../../helpers/checkout.js';

/*
 * The start log says what the jail lacks (fail loud): the two bubblewrap probes run side by side, and still the
 * missing piece is named — bubblewrap itself, or a bubblewrap that cannot make a sandbox here.
 */
describe('jail support: the start names what is missing, its probes run side by side', () => {
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
});
