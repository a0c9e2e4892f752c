import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, lstat, mkdir, mkdtemp, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import { INSTANCE_LOCK_FILES, readInstanceLock } from '../lifecycle/instance-lock.js';
import { CONTROL_DIR, controlSocketPath } from './control-channel.js';
import { copyDatabase, DATABASE_FILE, isDatabaseFile } from './database.js';
import { DATA_SCHEMAS, type DataSchema } from './schemas.js';

/** The manifest at the top of every backup archive. */
export interface BackupManifest {
  format: 'wa-assistant-backup';
  formatVersion: 1;
  createdAt: string;
  appVersion: string;
  /** Data file kind → schema version this build writes. */
  schemas: Record<string, number>;
  /** Every file under `data/` in the archive. */
  files: Array<{ path: string; size: number; sha256: string }>;
}

export const MANIFEST_NAME = 'backup-manifest.json';

/** Thrown for a backup or restore that must not go on; the message says why and what to do. */
export class BackupError extends Error {}

/**
 * Files never copied: the control socket, the instance lock, temporary files of interrupted writes, and the database's
 * WAL and index (the database is copied whole through SQLite, its WAL included).
 */
function skipped(rel: string): boolean {
  const first = rel.split(path.sep)[0];
  const base = path.basename(rel);
  return first === CONTROL_DIR || (isDatabaseFile(rel) && base !== DATABASE_FILE) || (INSTANCE_LOCK_FILES as readonly string[]).includes(first) || /\.tmp-\d+-\d+$/.test(base) || base.startsWith('.write-test-');
}

/** Regular files under `root` (relative paths, sorted); links are not followed (the archive holds no links). */
async function listFiles(root: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(path.join(root, rel), { withFileTypes: true })) {
    const child = path.join(rel, entry.name);
    if (skipped(child)) continue;
    if (entry.isDirectory()) out.push(...(await listFiles(root, child)));
    else if (entry.isFile()) out.push(child);
  }
  return out.sort();
}

export async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Asks the running bot to flush and hold its writes; resolves with the connection (closing it lets them go). */
async function holdRunningBot(dataDir: string): Promise<net.Socket | undefined> {
  const socketPath = controlSocketPath(dataDir);
  const conn = await new Promise<net.Socket | undefined>((resolve, reject) => {
    const c = net.connect(socketPath);
    c.once('connect', () => resolve(c));
    c.once('error', (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' || err.code === 'ECONNREFUSED' ? resolve(undefined) : reject(err)));
  });
  if (!conn) return undefined;
  conn.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    let answer = '';
    const timer = setTimeout(() => reject(new BackupError('the running bot did not confirm holding its writes within 30 s')), 30_000);
    conn.on('data', (chunk: string) => {
      answer += chunk;
      if (answer.includes('\n')) {
        clearTimeout(timer);
        if (answer.startsWith('held')) resolve();
        else reject(new BackupError(`the running bot refused to hold its writes: ${answer.trim()}`));
      }
    });
    conn.once('error', reject);
    conn.write('hold\n');
  });
  return conn;
}

function releaseBot(conn: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    conn.once('close', () => resolve());
    conn.end('release\n');
    setTimeout(() => {
      conn.destroy();
      resolve();
    }, 2000).unref();
  });
}

export interface BackupResult {
  file: string;
  files: number;
  bytes: number;
  /** True when a running bot flushed and held its writes during the copy. */
  online: boolean;
}

/** The default archive: `backups/data-<time>.tar.gz` beside DATA_DIR (never inside it). */
export function defaultBackupFile(dataDir: string, now = new Date()): string {
  return path.join(path.dirname(path.resolve(dataDir)), 'backups', `${path.basename(path.resolve(dataDir))}-${now.toISOString().replace(/[:.]/g, '-')}.tar.gz`);
}

/** Modes of everything a backup writes and a restore puts in place: the data is as secret as the WhatsApp account. */
const PRIVATE_DIR = 0o700;
const PRIVATE_FILE = 0o600;

/**
 * Copies `from` to a new file `to` that is 0600 from its first byte: opened with that mode (a umask can only narrow
 * it), exclusively and without following a link planted at `to`.
 */
async function copyPrivate(from: string, to: string): Promise<void> {
  await pipeline(createReadStream(from), createWriteStream(to, { flags: 'wx', mode: PRIVATE_FILE }));
}

/**
 * The folder an archive is written to: made 0700 when missing, and refused when any user may write into it (they
 * could swap the archive or plant names in it) unless it is sticky like /tmp (where only the archive's owner may
 * rename or remove it). The default `backups/` folder is always set back to 0700.
 */
async function prepareArchiveFolder(folder: string, isDefault: boolean): Promise<void> {
  await mkdir(folder, { recursive: true, mode: PRIVATE_DIR });
  const info = await stat(folder);
  if (isDefault) {
    if ((info.mode & 0o777) !== PRIVATE_DIR) await chmod(folder, PRIVATE_DIR);
    return;
  }
  if (info.mode & 0o002 && !(info.mode & 0o1000)) {
    throw new BackupError(`the folder ${folder} may be written by every user of this machine (mode ${(info.mode & 0o777).toString(8)}), so another user could swap the archive: write the backup to a private folder`);
  }
}

/**
 * Writes one `.tar.gz` of the data folder with a manifest (every file's size and sha256, created-at, app and schema
 * versions). With a bot running on the folder, it first asks the bot over the control socket to flush every store and
 * hold its writes, copies the folder to a staging folder beside the archive, and lets the writes go before packing;
 * without a bot it copies directly. `schemas`: every data file kind (the core's and the plugins' `dataFiles`),
 * default the core's.
 *
 * The archive is as secret as the WhatsApp account, and no other user of the machine ever reads a byte of it: the
 * staging folder (made 0700 with a random name) holds every copy and the archive while it is written, each file
 * created 0600 from its first byte; the finished archive is renamed into place. A symbolic link (or anything but a
 * file) planted at the target is refused, never written through.
 *
 * @example const { file } = await createBackup({ dataDir: 'data', appVersion: '0.1.0' });
 */
export async function createBackup(options: { dataDir: string; file?: string; appVersion: string; schemas?: DataSchema[] }): Promise<BackupResult> {
  const dataDir = path.resolve(options.dataDir);
  const file = path.resolve(options.file ?? defaultBackupFile(dataDir));
  if (file === dataDir || file.startsWith(dataDir + path.sep)) throw new BackupError(`the backup ${file} would be inside the data folder ${dataDir}; write it elsewhere`);
  const info = await stat(dataDir).catch(() => undefined);
  if (!info?.isDirectory()) throw new BackupError(`there is no data folder at ${dataDir} (DATA_DIR) to back up`);
  await prepareArchiveFolder(path.dirname(file), options.file === undefined);
  const refuseOddTarget = async () => {
    const there = await lstat(file).catch(() => undefined);
    if (there?.isSymbolicLink()) throw new BackupError(`${file} is a symbolic link: refusing to write the backup through it (remove the link or choose another name)`);
    if (there && !there.isFile()) throw new BackupError(`${file} exists and is not a file: choose another name for the backup`);
  };
  await refuseOddTarget();
  // mkdtemp makes the folder 0700 with a name nobody can guess: nothing in it is reachable by another user.
  const staging = await mkdtemp(path.join(path.dirname(file), '.backup-staging-'));
  try {
    await chmod(staging, PRIVATE_DIR);
    const conn = await holdRunningBot(dataDir);
    if (!conn && (await readInstanceLock(dataDir))) {
      throw new BackupError(`a bot is running on ${dataDir} but its control channel did not answer; restart it with this version, then back up again`);
    }
    let names: string[];
    try {
      names = await listFiles(dataDir);
      for (const name of names) {
        const target = path.join(staging, 'data', name);
        await mkdir(path.dirname(target), { recursive: true, mode: PRIVATE_DIR });
        if (isDatabaseFile(name)) await copyDatabase(path.join(dataDir, name), target, PRIVATE_FILE);
        else await copyPrivate(path.join(dataDir, name), target);
      }
    } finally {
      if (conn) await releaseBot(conn);
    }
    const files: BackupManifest['files'] = [];
    let bytes = 0;
    for (const name of names) {
      const copied = path.join(staging, 'data', name);
      const size = (await lstat(copied)).size;
      bytes += size;
      files.push({ path: name.split(path.sep).join('/'), size, sha256: await sha256(copied) });
    }
    const manifest: BackupManifest = {
      format: 'wa-assistant-backup',
      formatVersion: 1,
      createdAt: new Date().toISOString(),
      appVersion: options.appVersion,
      schemas: Object.fromEntries((options.schemas ?? DATA_SCHEMAS).map((s) => [s.name, s.version])),
      files,
    };
    await writeFile(path.join(staging, MANIFEST_NAME), JSON.stringify(manifest, null, 2), { flag: 'wx', mode: PRIVATE_FILE });
    await mkdir(path.join(staging, 'data'), { recursive: true, mode: PRIVATE_DIR });
    const packed = path.join(staging, 'archive.tar.gz');
    await pipeline(tar.create({ gzip: true, cwd: staging, portable: true }, [MANIFEST_NAME, 'data']), createWriteStream(packed, { flags: 'wx', mode: PRIVATE_FILE }));
    const handle = await open(packed, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await refuseOddTarget();
    await rename(packed, file);
    return { file, files: files.length, bytes, online: Boolean(conn) };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Reads and checks an extracted archive against its manifest. Returns the manifest. */
async function checkExtracted(folder: string, schemas: DataSchema[]): Promise<BackupManifest> {
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(await readFile(path.join(folder, MANIFEST_NAME), 'utf8')) as BackupManifest;
  } catch (err) {
    throw new BackupError(`the archive has no readable ${MANIFEST_NAME} (${(err as Error).message}); is it a backup made by npm run backup?`);
  }
  if (manifest.format !== 'wa-assistant-backup' || manifest.formatVersion !== 1 || !Array.isArray(manifest.files)) throw new BackupError('the archive\'s manifest is not a backup manifest this version understands');
  for (const spec of schemas) {
    const version = manifest.schemas?.[spec.name];
    if (typeof version === 'number' && version > spec.version) {
      throw new BackupError(`the backup was made by a newer version of the bot (${spec.name} v${version}; this one reads up to v${spec.version}); update the bot first`);
    }
  }
  const root = path.join(folder, 'data');
  const present = new Set((await listFiles(root).catch(() => [] as string[])).map((n) => n.split(path.sep).join('/')));
  for (const entry of manifest.files) {
    const full = path.join(root, ...entry.path.split('/'));
    if (!present.delete(entry.path)) throw new BackupError(`the archive is incomplete: ${entry.path} is in the manifest but not in the archive`);
    const size = (await lstat(full)).size;
    if (size !== entry.size || (await sha256(full)) !== entry.sha256) throw new BackupError(`the archive is damaged: ${entry.path} does not match its checksum in the manifest`);
  }
  if (present.size) throw new BackupError(`the archive holds files its manifest does not list (${[...present].slice(0, 3).join(', ')})`);
  return manifest;
}

export interface RestoreResult {
  manifest: BackupManifest;
  /** Where the data that was replaced is kept. */
  keptAside?: string;
}

/**
 * Restores an archive made by `createBackup` into DATA_DIR: refuses while a bot holds the folder, extracts into a new
 * folder, checks every file against the manifest, then swaps it in (DATA_DIR renamed aside as
 * `<DATA_DIR>.replaced-<time>`); where DATA_DIR is a mount point (which cannot be renamed) its contents are swapped
 * instead and the replaced ones kept in `DATA_DIR/.replaced-<time>/`. `schemas` as for `createBackup`: a backup whose
 * manifest names a newer version of one of them is refused.
 */
export async function restoreBackup(options: { dataDir: string; file: string; schemas?: DataSchema[] }): Promise<RestoreResult> {
  const dataDir = path.resolve(options.dataDir);
  const archive = path.resolve(options.file);
  if (!(await stat(archive).catch(() => undefined))?.isFile()) throw new BackupError(`there is no backup file at ${archive}`);
  const refuseIfRunning = async () => {
    const holder = await readInstanceLock(dataDir);
    if (holder) throw new BackupError(`a bot${holder.pid ? ` (pid ${holder.pid})` : ''} is running on the data folder ${dataDir}: stop it first, then restore`);
  };
  await refuseIfRunning();
  const existing = await stat(dataDir).catch(() => undefined);
  const parentDev = (await stat(path.dirname(dataDir))).dev;
  const mountPoint = Boolean(existing && existing.dev !== parentDev);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  // Extracted on the same file system as its final place, so the swap is a rename.
  const staging = mountPoint ? path.join(dataDir, `.restore-${stamp}`) : `${dataDir}.restore-${stamp}`;
  await mkdir(staging, { recursive: true, mode: PRIVATE_DIR });
  try {
    await chmod(staging, PRIVATE_DIR);
    // Only files and folders under data/ (and the manifest) are taken, created with the bot's own modes (0700
    // folders, also those tar makes for a file's path, and 0600 files: a umask can only narrow them) and owner:
    // never the archive's owner ids (tar keeps them when run as root), set-id bits, links, devices or names outside.
    const refused: string[] = [];
    await tar.extract({
      file: archive,
      cwd: staging,
      strict: true,
      preserveOwner: false,
      dmode: PRIVATE_DIR,
      fmode: PRIVATE_FILE,
      filter: (p, entry) => {
        const read = entry as tar.ReadEntry;
        const inside = (p === MANIFEST_NAME || p === 'data' || p === 'data/' || p.startsWith('data/')) && !p.split('/').includes('..');
        if ((read.type !== 'File' && read.type !== 'Directory') || !inside) {
          refused.push(`${p} (${read.type})`);
          return false;
        }
        read.mode = read.type === 'Directory' ? PRIVATE_DIR : PRIVATE_FILE;
        return true;
      },
    });
    if (refused.length) {
      throw new BackupError(`the archive holds entries a backup never has (${refused.slice(0, 3).join(', ')}${refused.length > 3 ? ', …' : ''}): only files and folders under data/ are restored, never links, devices or other names; nothing was restored`);
    }
    const manifest = await checkExtracted(staging, options.schemas ?? DATA_SCHEMAS);
    await refuseIfRunning();
    let keptAside: string | undefined;
    if (!existing) {
      await rename(path.join(staging, 'data'), dataDir);
    } else if (!mountPoint) {
      keptAside = `${dataDir}.replaced-${stamp}`;
      await rename(dataDir, keptAside);
      // The replaced data holds the account too: it stays private beside the restored one.
      await chmod(keptAside, PRIVATE_DIR);
      await rename(path.join(staging, 'data'), dataDir);
    } else {
      keptAside = path.join(dataDir, `.replaced-${stamp}`);
      await mkdir(keptAside, { mode: PRIVATE_DIR });
      await chmod(keptAside, PRIVATE_DIR);
      for (const name of await readdir(dataDir)) {
        if (name === path.basename(staging) || name === path.basename(keptAside) || name.startsWith('.replaced-')) continue;
        await rename(path.join(dataDir, name), path.join(keptAside, name));
      }
      for (const name of await readdir(path.join(staging, 'data'))) await rename(path.join(staging, 'data', name), path.join(dataDir, name));
    }
    return { manifest, keptAside };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
