import { expect } from 'chai';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, lstat, mkdir, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import * as tarStream from 'tar-stream';
import { BackupError, restoreBackup } from '../../../core/services/store/backup.js';
import { ROOT, tempDir } from '../../helpers/checkout.js';
import { runToExit, type ProcessRun } from '../../helpers/run-to-exit.js';
import { runCommand } from '../../helpers/run-script.js';

/** The uid and gid of `nobody`: another user of the machine, the one the jail runs code as. */
const OTHER_UID = 65534;
const SECRET = 'creds-secret-7f3a9c';

/**
 * Runs one of the program's entry points with umask 000 (the widest), as `npm run backup|restore` would: the backup
 * another user watches is its own process; the other tests run the same commands in this process (`runInProcess`).
 */
function runCli(script: string, args: string[], cwd: string): Promise<ProcessRun> {
  return runToExit(script, '/bin/sh', ['-c', 'umask 000 && exec "$0" "$@"', process.execPath, path.join(ROOT, 'dist', 'cli', script), ...args], { cwd, env: { PATH: process.env.PATH ?? '' }, timeoutMs: 60_000 });
}

/** Runs the backup or the restore in this process with umask 000, as `runCli` runs it as a process. */
function runInProcess(command: 'backup' | 'restore', args: string[], cwd: string): Promise<ProcessRun> {
  return withUmask(0, () => runCommand(command, args, { cwd }));
}

/**
 * Polls everything below a folder, over and over, until its stdin closes: lists every folder it may enter, notes the
 * widest mode each name ever had, and (with \`read\`) reads every file it may open. Run as another user (nobody) it
 * is the attacker; run as root it watches the modes of files while they are written.
 */
const POLLER = `
const fs = require('fs'), path = require('path');
const [root, mode] = process.argv.slice(1);
let stop = false, bytes = 0, rounds = 0;
const seen = new Set(), read = new Set(), widest = {};
process.stdin.on('data', () => {}).on('end', () => { stop = true; });
const buffer = Buffer.alloc(1 << 16);
const walk = (dir, depth) => {
  let names;
  try { names = fs.readdirSync(dir); } catch { return; }
  for (const name of names) {
    const full = path.join(dir, name);
    seen.add(path.relative(root, full));
    let st;
    try { st = fs.lstatSync(full); } catch { continue; }
    const rel = path.relative(root, full);
    widest[rel] = (widest[rel] || 0) | st.mode;
    if (st.isDirectory()) { if (depth < 8) walk(full, depth + 1); continue; }
    if (mode !== 'read') continue;
    let fd;
    try { fd = fs.openSync(full, 'r'); } catch { continue; }
    try { let n; while ((n = fs.readSync(fd, buffer)) > 0) { bytes += n; read.add(path.relative(root, full)); } } catch {} finally { fs.closeSync(fd); }
  }
};
process.stdout.write('ready\\n');
const loop = () => {
  if (stop) { process.stdout.write(JSON.stringify({ uid: process.getuid(), bytes, rounds, seen: [...seen], read: [...read], widest }) + '\\n'); return; }
  walk(root, 0);
  rounds++;
  setImmediate(loop);
};
loop();
`;

interface PollReport {
  uid: number;
  bytes: number;
  rounds: number;
  seen: string[];
  read: string[];
  /** Name → every mode bit it was seen with (type bits included). */
  widest: Record<string, number>;
}

/**
 * Starts the poller on `folder`, as nobody reading what it can, or as this (root) user noting modes only; resolves
 * once it is polling. `finish()` stops it and gives its report.
 */
async function poll(folder: string, as: 'other user' | 'root watching modes'): Promise<{ finish(): Promise<PollReport> }> {
  const command = as === 'other user' ? ['setpriv', `--reuid=${OTHER_UID}`, `--regid=${OTHER_UID}`, '--clear-groups', process.execPath] : [process.execPath];
  const child: ChildProcessWithoutNullStreams = spawn(command[0]!, [...command.slice(1), '-e', POLLER, folder, as === 'other user' ? 'read' : 'modes']);
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('ready\n')) resolve();
    });
    child.on('error', reject);
    child.on('close', () => reject(new Error(`the poller ended early: ${err}`)));
  });
  return {
    async finish() {
      child.stdin.end();
      await closed;
      const last = out.trim().split('\n').pop() ?? '';
      return JSON.parse(last) as PollReport;
    },
  };
}

/** Runs git in `cwd`; resolves with its stdout (rejects on a non-zero exit). */
function git(cwd: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`git ${args.join(' ')} exited ${code}: ${err}`))));
  });
}

/** Runs `work` with this process's umask set to `mask` (restored after). */
async function withUmask<T>(mask: number, work: () => Promise<T>): Promise<T> {
  const before = process.umask(mask);
  try {
    return await work();
  } finally {
    process.umask(before);
  }
}

/** Every path below `root` with its type, mode, owner and group. */
async function listModes(root: string): Promise<Array<{ rel: string; type: string; mode: number; uid: number; gid: number }>> {
  const out: Array<{ rel: string; type: string; mode: number; uid: number; gid: number }> = [];
  for (const rel of (await readdir(root, { recursive: true })) as string[]) {
    const st = await lstat(path.join(root, rel));
    out.push({ rel, type: st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other', mode: st.mode & 0o7777, uid: st.uid, gid: st.gid });
  }
  return out;
}

/** A data folder holding the account (creds.json with a secret) and enough incompressible data that packing takes a while. */
async function accountData(home: string, megabytes: number): Promise<void> {
  await mkdir(path.join(home, 'data', 'session_auth'), { recursive: true });
  await writeFile(path.join(home, 'data', 'session_auth', 'creds.json'), JSON.stringify({ noiseKey: SECRET }));
  await mkdir(path.join(home, 'data', 'voice'), { recursive: true });
  await pipeline(
    (async function* () {
      for (let i = 0; i < megabytes; i++) yield randomBytes(1 << 20);
    })(),
    createWriteStream(path.join(home, 'data', 'voice', 'segment.bin')),
  );
}

describe('backups stay private while written, and a restore never widens permissions', function () {
  this.timeout(120_000);
  let dirs: string[] = [];
  const dir = async () => {
    const d = await tempDir();
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    dirs = [];
  });

  it('another user polling the backup folder while a backup is written (umask 000) never reads a byte of it', async () => {
    // A checkout other users may look into (0755), and a backups folder there that is 0755 too.
    const home = await dir();
    await chmod(home, 0o755);
    await accountData(home, 8);
    const shared = path.join(home, 'archives');
    await mkdir(shared, { mode: 0o755 });
    await chmod(shared, 0o755);
    const out = path.join(shared, 'nightly.tar.gz');
    const attacker = await poll(home, 'other user');
    const watcher = await poll(shared, 'root watching modes');
    const backup = await runCli('backup.js', [out], home);
    const report = await attacker.finish();
    const watched = await watcher.finish();
    expect(backup.code, backup.stderr).to.equal(0);
    expect(report.uid).to.equal(OTHER_UID);
    // Every file of the backup was 0600 and every folder 0700 from the moment it was first seen (umask 000).
    const inProgress = Object.keys(watched.widest).filter((n) => n !== 'nightly.tar.gz');
    expect(inProgress.some((n) => n.endsWith('.tar.gz') || n.endsWith('.partial')), `the archive was watched while written (saw ${inProgress.join(', ')})`).to.equal(true);
    expect(inProgress.some((n) => n.endsWith('creds.json')), 'the copy of creds.json was watched').to.equal(true);
    const wider = Object.entries(watched.widest).filter(([, mode]) => mode & 0o7777 & ~((mode & 0o170000) === 0o040000 ? 0o700 : 0o600));
    expect(wider.map(([name, mode]) => `${name} ${mode.toString(8)}`), 'names that were ever wider than 0600 files / 0700 folders').to.deep.equal([]);
    // The poller was there while the backup was written (it saw it in progress), yet read nothing of it.
    expect(report.seen.filter((n) => n.startsWith('archives/') && n !== 'archives/nightly.tar.gz'), 'names seen while the backup was written').to.not.be.empty;
    expect(report.read.filter((n) => n.startsWith('archives/')), 'files of the backup another user read').to.deep.equal([]);
    expect((await stat(out)).mode & 0o777).to.equal(0o600);
    expect(await readdir(shared)).to.deep.equal(['nightly.tar.gz']);
    // Inside the archive too every file is 0600 and every folder 0700 (a restore by hand with tar keeps them private).
    const modes: Array<{ path: string; mode: number; type: string }> = [];
    await tar.list({ file: out, onReadEntry: (e) => modes.push({ path: e.path, mode: (e.mode ?? 0) & 0o7777, type: e.type }) });
    expect(modes.filter((m) => m.mode !== (m.type === 'Directory' ? 0o700 : 0o600))).to.deep.equal([]);
    expect(modes.map((m) => m.path)).to.include('data/session_auth/creds.json');
  });

  it('the default backups/ folder is 0700, and is set back to 0700 when it was made wider', async () => {
    const home = await dir();
    await accountData(home, 1);
    await mkdir(path.join(home, 'backups'), { mode: 0o755 });
    await chmod(path.join(home, 'backups'), 0o755);
    const first = await runInProcess('backup', [], home);
    expect(first.code, first.stderr).to.equal(0);
    expect((await stat(path.join(home, 'backups'))).mode & 0o777).to.equal(0o700);
    await rm(path.join(home, 'backups'), { recursive: true });
    const fresh = await runInProcess('backup', [], home);
    expect(fresh.code, fresh.stderr).to.equal(0);
    expect((await stat(path.join(home, 'backups'))).mode & 0o777).to.equal(0o700);
    const [archive] = await readdir(path.join(home, 'backups'));
    expect((await stat(path.join(home, 'backups', archive!))).mode & 0o777).to.equal(0o600);
  });

  it('in a git checkout, backups/ and data.replaced-*/ (the account\'s archives) stay out of git and are 0700', async () => {
    const home = await dir();
    await git(home, 'init', '-q');
    await writeFile(path.join(home, '.gitignore'), await readFile(path.join(ROOT, '.gitignore')));
    await accountData(home, 1);
    const backup = await runInProcess('backup', [], home);
    expect(backup.code, backup.stderr).to.equal(0);
    const [archive] = await readdir(path.join(home, 'backups'));
    const restore = await runInProcess('restore', [path.join('backups', archive!)], home);
    expect(restore.code, restore.stderr).to.equal(0);
    const aside = (await readdir(home)).filter((n) => n.startsWith('data.replaced-'));
    expect(aside).to.have.length(1);
    for (const folder of ['backups', aside[0]!]) expect((await stat(path.join(home, folder))).mode & 0o777, folder).to.equal(0o700);
    // What `git add -A` would take: only the .gitignore itself, nothing of the account.
    const status = await git(home, 'status', '--porcelain', '--untracked-files=all');
    expect(status.trim().split('\n')).to.deep.equal(['?? .gitignore']);
    const checked = await git(home, 'check-ignore', '--no-index', `backups/${archive}`, `${aside[0]}/session_auth/creds.json`, 'data/session_auth/creds.json');
    expect(checked.trim().split('\n')).to.have.length(3);
  });

  it('a symbolic link planted at the target, or where a temporary file would go, is never written through', async () => {
    const home = await dir();
    await accountData(home, 1);
    const shared = path.join(home, 'archives');
    await mkdir(shared, { mode: 0o1777 });
    await chmod(shared, 0o1777); // sticky and world-writable, like /tmp: allowed, but others may plant names in it
    const victim = path.join(home, 'victim.txt');
    await writeFile(victim, 'the victim file');
    await chmod(victim, 0o644);

    const out = path.join(shared, 'b.tar.gz');
    await symlink(victim, out);
    const atTarget = await runInProcess('backup', [out], home);
    expect(atTarget.code).to.equal(1);
    expect(atTarget.stderr).to.include('is a symbolic link');
    expect(await readlink(out)).to.equal(victim);

    // Links at every name a writer might use for its unfinished file (the archive's name plus a suffix).
    const other = path.join(shared, 'c.tar.gz');
    for (const suffix of ['.partial', '.tmp', '.part', '~']) await symlink(victim, other + suffix);
    const beside = await runInProcess('backup', [other], home);
    expect(beside.code, beside.stderr).to.equal(0);
    expect(await readFile(victim, 'utf8')).to.equal('the victim file');
    expect((await stat(victim)).mode & 0o777).to.equal(0o644);
    expect((await lstat(other)).isFile()).to.equal(true);
    expect((await stat(other)).mode & 0o777).to.equal(0o600);
  });

  it('a folder every user may write into (and not sticky) is refused: another user could swap the archive', async () => {
    const home = await dir();
    await accountData(home, 1);
    const open = path.join(home, 'open');
    await mkdir(open);
    await chmod(open, 0o777);
    const backup = await runInProcess('backup', [path.join(open, 'b.tar.gz')], home);
    expect(backup.code).to.equal(1);
    expect(backup.stderr).to.include('may be written by every user');
    expect(await readdir(open)).to.deep.equal([]);
  });

  /** A crafted archive: a valid manifest listing `files`, plus whatever `extra` entries the attacker adds. */
  async function craftedArchive(folder: string, files: Array<{ name: string; body: string; mode: number; uid: number; gid: number }>, extra: Partial<tarStream.Header> & { name: string }[] = []): Promise<string> {
    const manifest = {
      format: 'wa-assistant-backup',
      formatVersion: 1,
      createdAt: '2026-01-01T00:00:00.000Z',
      appVersion: '0.1.0',
      schemas: {},
      files: files.map((f) => ({ path: f.name, size: Buffer.byteLength(f.body), sha256: createHash('sha256').update(f.body).digest('hex') })),
    };
    const pack = tarStream.pack();
    const file = path.join(folder, `crafted-${Math.random().toString(36).slice(2)}.tar`);
    const written = pipeline(pack, createWriteStream(file));
    const add = (header: Partial<tarStream.Header> & { name: string }, body?: string) => new Promise<void>((resolve, reject) => pack.entry(header as tarStream.Header, body ?? '', (err) => (err ? reject(err) : resolve())));
    await add({ name: 'backup-manifest.json', mode: 0o644 }, JSON.stringify(manifest));
    await add({ name: 'data/', type: 'directory', mode: 0o777, uid: 4242, gid: 4242 });
    await add({ name: 'data/session_auth/', type: 'directory', mode: 0o755, uid: 4242, gid: 4242 });
    for (const f of files) await add({ name: `data/${f.name}`, mode: f.mode, uid: f.uid, gid: f.gid }, f.body);
    for (const header of extra) await add(header);
    pack.finalize();
    await written;
    return file;
  }

  it('a crafted archive restored as root keeps neither its owners, its modes nor set-id bits: 0700 folders, 0600 files', async () => {
    const home = await dir();
    await mkdir(path.join(home, 'data'), { mode: 0o755 });
    await chmod(path.join(home, 'data'), 0o755);
    await writeFile(path.join(home, 'data', 'old.json'), '{}');
    const archive = await craftedArchive(home, [
      { name: 'session_auth/creds.json', body: JSON.stringify({ noiseKey: SECRET }), mode: 0o644, uid: 4242, gid: 4242 },
      // A set-uid root program and a set-gid one, owned by root in the archive.
      { name: 'workspaces/files/abc/run', body: '#!/bin/sh\nid\n', mode: 0o4755, uid: 0, gid: 0 },
      { name: 'workspaces/files/abc/group', body: 'x', mode: 0o2775, uid: 4242, gid: 0 },
      // A file whose folders the archive does not list (tar makes them itself).
      { name: 'memory/deep/a.json', body: '{"version":1,"facts":[]}', mode: 0o666, uid: 4242, gid: 4242 },
    ]);
    const restore = await runInProcess('restore', [archive], home);
    expect(restore.code, restore.stderr).to.equal(0);
    const restored = await listModes(path.join(home, 'data'));
    expect(restored.map((e) => e.rel)).to.include.members(['session_auth', 'session_auth/creds.json', 'workspaces/files/abc/run', 'memory/deep/a.json']);
    const uid = process.getuid!();
    const gid = process.getgid!();
    expect(restored.filter((e) => e.type !== (e.rel.endsWith('.json') || e.rel.endsWith('run') || e.rel.endsWith('group') ? 'file' : 'dir'))).to.deep.equal([]);
    expect(restored.filter((e) => e.mode !== (e.type === 'dir' ? 0o700 : 0o600)), 'entries with other modes').to.deep.equal([]);
    expect(restored.filter((e) => e.uid !== uid || e.gid !== gid), 'entries owned by the archive\'s ids').to.deep.equal([]);
    expect((await stat(path.join(home, 'data'))).mode & 0o777).to.equal(0o700);
    expect(JSON.parse(await readFile(path.join(home, 'data', 'session_auth', 'creds.json'), 'utf8')).noiseKey).to.equal(SECRET);
    // The data it replaced holds the account too: kept aside, 0700.
    const aside = (await readdir(home)).filter((n) => n.startsWith('data.replaced-'));
    expect(aside).to.have.length(1);
    expect((await stat(path.join(home, aside[0]!))).mode & 0o777).to.equal(0o700);
    expect(await readFile(path.join(home, aside[0]!, 'old.json'), 'utf8')).to.equal('{}');
  });

  it('an archive with a link out of the data folder, a hard link, a device or a name outside data/ is refused whole', async () => {
    const home = await dir();
    const outside = path.join(home, 'outside-secret.txt');
    await writeFile(outside, 'not for the bot');
    await mkdir(path.join(home, 'data'));
    await writeFile(path.join(home, 'data', 'old.json'), '{"kept":true}');
    const creds = [{ name: 'session_auth/creds.json', body: '{}', mode: 0o600, uid: 0, gid: 0 }];
    const attacks: Array<{ label: string; header: Partial<tarStream.Header> & { name: string } }> = [
      { label: 'symbolic link out', header: { name: 'data/session_auth/link', type: 'symlink', linkname: outside } },
      { label: 'relative link out', header: { name: 'data/up', type: 'symlink', linkname: '../../../../../../etc' } },
      { label: 'hard link', header: { name: 'data/hard', type: 'link', linkname: outside } },
      { label: 'character device', header: { name: 'data/null', type: 'character-device', devmajor: 1, devminor: 3, mode: 0o666 } },
      { label: 'fifo', header: { name: 'data/pipe', type: 'fifo', mode: 0o666 } },
      { label: 'name outside data/', header: { name: 'planted.sh', size: 0, mode: 0o755 } },
      { label: 'climbing name', header: { name: 'data/../../escape.txt', size: 0, mode: 0o644 } },
    ];
    for (const attack of attacks) {
      const archive = await craftedArchive(home, creds, [attack.header]);
      const refusal = await withUmask(0, () => restoreBackup({ dataDir: path.join(home, 'data'), file: archive })).then(
        () => undefined,
        (err: Error) => err,
      );
      expect(refusal, attack.label).to.be.instanceOf(BackupError);
      expect(refusal!.message, attack.label).to.include('only files and folders under data/ are restored');
      expect(await readFile(path.join(home, 'data', 'old.json'), 'utf8'), attack.label).to.equal('{"kept":true}');
      expect((await readdir(home)).filter((n) => n !== 'data' && n !== 'outside-secret.txt' && !n.startsWith('crafted-')), attack.label).to.deep.equal([]);
      expect(await readFile(outside, 'utf8'), attack.label).to.equal('not for the bot');
    }
    expect(await readdir(path.dirname(home))).to.not.include('escape.txt');
  });
});
