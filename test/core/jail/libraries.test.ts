import { expect } from 'chai';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Jail, JailRefused, type JailLimits } from '../../../core/services/jail/index.js';
import { tempDir } from '../../helpers/checkout.js';

const LIMITS: JailLimits = { wallSeconds: 20, cpuSeconds: 20, memoryMb: 256, maxProcesses: 16, maxOutputBytes: 65_536, diskBytes: 1 << 20 };

/**
 * A job's `libraries` (a trusted script and the npm packages it imports, as the document reader uses them): shown
 * read-only at /opt/jail/lib as the jail's unprivileged uid, never writable from inside, and never anything but the
 * named paths; names that could climb out are refused, and a job with libraries never runs outside bubblewrap.
 */
describe('jail libraries (real bubblewrap)', function () {
  this.timeout(60_000);
  let jail: Jail;
  let dir: string;
  before(async function () {
    jail = new Jail();
    if (!(await jail.detect()).bwrap.ok) this.skip();
    dir = await tempDir('wabot-jail-lib-');
    await mkdir(path.join(dir, 'pkg'), { recursive: true });
    await writeFile(path.join(dir, 'pkg', 'index.js'), 'export const answer = 42;\n');
    await writeFile(path.join(dir, 'pkg', 'package.json'), '{"name":"pkg","type":"module","main":"index.js"}');
    await writeFile(path.join(dir, 'main.mjs'), "import { answer } from 'pkg'; import { writeFileSync } from 'node:fs';\nconsole.log('ANSWER', answer);\ntry { writeFileSync('/opt/jail/lib/node_modules/pkg/index.js', 'export const answer = 0;'); console.log('WRITE OK'); } catch (e) { console.log('WRITE', e.code); }\ntry { writeFileSync('/opt/jail/lib/planted.js', 'x'); console.log('PLANT OK'); } catch (e) { console.log('PLANT', e.code); }\n");
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('node inside the jail imports a package shown under /opt/jail/lib/node_modules, and cannot change or add a file there', async () => {
    const result = await jail.run({ kind: 'code', program: '/usr/bin/node', args: ['/opt/jail/lib/main.mjs'], libraries: { 'main.mjs': path.join(dir, 'main.mjs'), 'node_modules/pkg': path.join(dir, 'pkg') }, limits: LIMITS });
    expect(result.jailed).to.equal(true);
    expect(result.stdout, result.stderr).to.contain('ANSWER 42');
    expect(result.stdout).to.match(/WRITE (EROFS|EACCES)/);
    // A file made beside the libraries lives in the run's own throw-away root, never in a host folder.
    expect(await readFile(path.join(dir, 'pkg', 'index.js'), 'utf8')).to.equal('export const answer = 42;\n');
    expect((await readdir(dir)).sort()).to.deep.equal(['main.mjs', 'pkg']);
    expect((await readdir(path.join(dir, 'pkg'))).sort()).to.deep.equal(['index.js', 'package.json']);
  });

  it('refuses library names that climb out or are absolute', async () => {
    for (const name of ['../escape', 'a/../../b', '/etc/passwd', 'node_modules/..']) {
      const err = await jail.run({ kind: 'code', program: '/usr/bin/true', args: [], libraries: { [name]: dir }, limits: LIMITS }).then(() => undefined, (e: unknown) => e);
      expect(err, name).to.be.instanceOf(Error);
      expect((err as Error).message, name).to.match(/bad jail library name/);
    }
  });

  it('a job with libraries is refused where bubblewrap cannot run', async () => {
    const off = new Jail({ support: { ...(await jail.detect()), bwrap: { ok: false, reason: 'no user namespaces (test)' } } });
    const err = await off.run({ kind: 'media', program: '/usr/bin/true', args: [], libraries: { 'main.mjs': path.join(dir, 'main.mjs') }, limits: LIMITS }).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(JailRefused);
  });
});
