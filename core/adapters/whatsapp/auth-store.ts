import { mkdir, readFile, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  BufferJSON,
  initAuthCreds,
  proto,
  type AuthenticationCreds,
  type AuthenticationState,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from '@whiskeysockets/baileys';
import { removeLeftoverTempFiles, writeDurably, type DurableWriteOptions } from './durable-write.js';
import { CREDS_BACKUP, readCredsText, restoreCredsFromBackup, writeCredsBackup, type CredsRecovery } from './creds-backup.js';
import { staleKeyFiles, type KeyFileAge } from './stale-keys.js';

/**
 * Thrown when `creds.json` exists but cannot be read back. The service refuses to start rather than pairing as a
 * fresh device (which is what Baileys' own `useMultiFileAuthState` silently does with a half-written file).
 */
export class AuthStateCorruptError extends Error {
  constructor(readonly file: string, reason: string) {
    super(
      `The WhatsApp session file ${file} is corrupt (${reason}), and there is no good copy (${CREDS_BACKUP}, written ` +
        `after each successful connection) to restore. The bot will not start, because starting would silently link ` +
        `it as a new device. Restore ${path.basename(file)} from a backup, or delete the folder ${path.dirname(file)} to ` +
        `link the phone again with a new QR scan (npm run restore puts a whole backup of the data folder back).`,
    );
    this.name = 'AuthStateCorruptError';
  }
}

export interface DurableAuthState {
  state: AuthenticationState;
  /** Writes the current credentials (call on every `creds.update`). */
  saveCreds(): Promise<void>;
  /** Deletes every session file (after a logout) and waits for pending writes first. */
  clear(): Promise<void>;
  /** Resolves when every write started so far is on disk. */
  flush(): Promise<void>;
  /** True when the credentials came from disk (a linked session), false for fresh credentials. */
  restored: boolean;
  /** Set when creds.json was unusable and its last good copy (creds.json.bak) was put in its place at load. */
  recovery?: CredsRecovery;
  /** Keeps the current credentials as the good copy (creds.json.bak): call only once the connection opened with them. */
  keepGoodCopy(): Promise<void>;
  /**
   * Deletes session and sender-key files untouched for `maxAgeMs` (they only grow otherwise); a group's own sender key
   * and its sender-key memory go together or not at all (see staleKeyFiles). Returns their names.
   */
  pruneStale(maxAgeMs: number, now?: number): Promise<string[]>;
}

export interface DurableAuthOptions {
  /** Hook into each file write (tests imitate a crash between writing and renaming). */
  write?: DurableWriteOptions;
  /** Told about key files that could not be parsed (they are treated as missing; Baileys re-negotiates them). */
  onCorruptKey?: (file: string, reason: string) => void;
}

/** File name of one key, in the layout of Baileys' `useMultiFileAuthState` (so existing sessions keep working). */
export function keyFileName(type: string, id: string): string {
  return `${type}-${id}.json`.replace(/\//g, '__').replace(/:/g, '-');
}

/**
 * Why `value` (creds.json after BufferJSON revival) cannot be the account's credentials, or undefined when it can:
 * the key pairs Baileys signs and encrypts with must be 32-byte buffers, the pre-key signature 64 bytes, the ids
 * whole numbers. The right keys with wrong value types would otherwise be taken as the account and fail later, deep
 * inside the handshake.
 */
export function credsProblem(value: unknown): string | undefined {
  const what = (x: unknown) => (x === null ? 'null' : Array.isArray(x) ? 'a list' : Buffer.isBuffer(x) ? `${x.length} bytes` : typeof x === 'object' ? 'an object' : `a ${typeof x}`);
  if (!value || typeof value !== 'object' || Array.isArray(value)) return `it holds ${what(value)}, not the credentials object`;
  const v = value as Record<string, any>;
  const bytes = (field: string, x: unknown, length: number) => (Buffer.isBuffer(x) && x.length === length ? undefined : `${field} must be ${length} bytes of key material (found ${what(x)})`);
  const keyPair = (field: string, x: unknown) => {
    if (!x || typeof x !== 'object') return `${field} must be a key pair (found ${what(x)})`;
    const pair = x as Record<string, unknown>;
    return bytes(`${field}.public`, pair.public, 32) ?? bytes(`${field}.private`, pair.private, 32);
  };
  const whole = (field: string, x: unknown) => (Number.isInteger(x) && (x as number) >= 0 ? undefined : `${field} must be a whole number (found ${what(x)})`);
  for (const field of ['noiseKey', 'pairingEphemeralKeyPair', 'signedIdentityKey']) {
    const problem = keyPair(field, v[field]);
    if (problem) return problem;
  }
  if (!v.signedPreKey || typeof v.signedPreKey !== 'object') return `signedPreKey must be an object (found ${what(v.signedPreKey)})`;
  const preKey = keyPair('signedPreKey.keyPair', v.signedPreKey.keyPair) ?? bytes('signedPreKey.signature', v.signedPreKey.signature, 64) ?? whole('signedPreKey.keyId', v.signedPreKey.keyId);
  if (preKey) return preKey;
  const ids = whole('registrationId', v.registrationId) ?? whole('nextPreKeyId', v.nextPreKeyId) ?? whole('firstUnuploadedPreKeyId', v.firstUnuploadedPreKeyId);
  if (ids) return ids;
  if (typeof v.advSecretKey !== 'string' || Buffer.from(v.advSecretKey, 'base64').length !== 32) return `advSecretKey must be 32 bytes in base64 (found ${what(v.advSecretKey)})`;
  if (v.me !== undefined && v.me !== null && (typeof v.me !== 'object' || typeof v.me.id !== 'string')) return `me.id must be a string (found ${what(v.me?.id)})`;
  if (v.processedHistoryMessages !== undefined && !Array.isArray(v.processedHistoryMessages)) return `processedHistoryMessages must be a list (found ${what(v.processedHistoryMessages)})`;
  return undefined;
}

/**
 * A Baileys auth state kept in a folder with the same files as `useMultiFileAuthState` (`creds.json`,
 * `<type>-<id>.json` for every signal key type including v7's `lid-mapping`, `device-list` and `tctoken`), but:
 * every write is atomic (temporary file, fsync, rename), writes of one file are serialised in call order, a read
 * waits for the pending write of its file. A corrupt (or lost) `creds.json` is replaced by its last good copy
 * (`creds.json.bak`, kept after each successful connection, see `keepGoodCopy`) and `recovery` says so; without a good
 * copy a corrupt one stops the start with an error naming the file.
 *
 * @example
 * const auth = await useDurableAuthState('data/session_auth');
 * const sock = makeWASocket({ auth: auth.state });
 * sock.ev.on('creds.update', () => void auth.saveCreds());
 */
export async function useDurableAuthState(folder: string, options: DurableAuthOptions = {}): Promise<DurableAuthState> {
  const info = await stat(folder).catch(() => undefined);
  if (info && !info.isDirectory()) throw new Error(`${folder} is not a folder: move it away so the WhatsApp session can be stored there`);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  await removeLeftoverTempFiles(folder);

  // One promise chain per file: writes and deletes of the same key happen in the order they were asked for.
  const queues = new Map<string, Promise<void>>();
  const enqueue = (file: string, job: () => Promise<void>): Promise<void> => {
    const previous = queues.get(file) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(job);
    const tail = run.catch(() => undefined);
    queues.set(file, tail);
    void tail.then(() => {
      if (queues.get(file) === tail) queues.delete(file);
    });
    return run;
  };
  const settled = (file: string) => queues.get(file) ?? Promise.resolve();

  const writeJson = (name: string, value: unknown) => {
    const file = path.join(folder, name);
    // Serialise now: the caller may change the object after this call returns.
    const text = JSON.stringify(value, BufferJSON.replacer);
    return enqueue(file, () => writeDurably(file, text, { ...options.write, syncFolder: name === 'creds.json' }));
  };
  const remove = (name: string) => {
    const file = path.join(folder, name);
    return enqueue(file, () => rm(file, { force: true }));
  };
  const readJson = async (name: string): Promise<unknown> => {
    const file = path.join(folder, name);
    await settled(file);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    try {
      return JSON.parse(text, BufferJSON.reviver);
    } catch (err) {
      options.onCorruptKey?.(file, (err as Error).message);
      return null;
    }
  };

  const credsFile = path.join(folder, 'creds.json');
  let creds: AuthenticationCreds;
  let restored = false;
  let recovery: CredsRecovery | undefined;
  let credsText: string | undefined;
  try {
    credsText = await readFile(credsFile, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const read = credsText === undefined ? undefined : readCredsText(credsText, credsProblem);
  if (read && 'creds' in read) {
    creds = read.creds;
    restored = true;
  } else {
    // A creds.json that is corrupt, or gone while its last good copy is still here: the session exists, so it is
    // restored from that copy (never a silent new device); without a good copy a corrupt file stops the start.
    const reason = read ? read.problem : 'the file is missing';
    const fromCopy = await restoreCredsFromBackup(folder, reason, credsProblem, options.write);
    if (fromCopy) {
      creds = fromCopy.creds;
      recovery = fromCopy.recovery;
      restored = true;
    } else if (read) throw new AuthStateCorruptError(credsFile, read.problem);
    else creds = initAuthCreds();
  }
  const keys: SignalKeyStore = {
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const data: { [id: string]: SignalDataTypeMap[T] } = {};
      await Promise.all(
        ids.map(async (id) => {
          let value = (await readJson(keyFileName(type, id))) as SignalDataTypeMap[T] | null;
          if (type === 'app-state-sync-key' && value) value = proto.Message.AppStateSyncKeyData.fromObject(value as object) as unknown as SignalDataTypeMap[T];
          if (value !== null && value !== undefined) data[id] = value;
        }),
      );
      return data;
    },
    async set(data: SignalDataSet) {
      const jobs: Promise<void>[] = [];
      for (const type of Object.keys(data) as Array<keyof SignalDataTypeMap>) {
        for (const [id, value] of Object.entries(data[type] ?? {})) {
          const name = keyFileName(type, id);
          jobs.push(value ? writeJson(name, value) : remove(name));
        }
      }
      await Promise.all(jobs);
    },
  };

  const flush = async () => {
    while (queues.size) await Promise.all([...queues.values()]);
  };

  return {
    pruneStale: async (maxAgeMs: number, now = Date.now()) => {
      const names = await readdir(folder).catch(() => [] as string[]);
      const files: KeyFileAge[] = [];
      for (const name of names) {
        if (!/^(session|sender-key)-.+\.json$/.test(name)) continue;
        const info = await stat(path.join(folder, name)).catch(() => undefined);
        if (info) files.push({ name, mtimeMs: info.mtimeMs });
      }
      const stale = staleKeyFiles(files, [creds.me?.id, creds.me?.lid], maxAgeMs, now);
      for (const name of stale) {
        const file = path.join(folder, name);
        await enqueue(file, () => rm(file, { force: true }));
      }
      return stale;
    },
    state: { creds, keys },
    restored,
    recovery,
    keepGoodCopy: () => {
      // Serialised with the writes of creds.json, and only credentials that pass the load check are kept.
      const problem = credsProblem(creds);
      if (problem) return Promise.reject(new Error(`not keeping a copy of credentials that would not load: ${problem}`));
      const text = JSON.stringify(creds, BufferJSON.replacer);
      return enqueue(path.join(folder, CREDS_BACKUP), () => writeCredsBackup(folder, text, options.write));
    },
    saveCreds: () => writeJson('creds.json', creds),
    flush,
    async clear() {
      await flush();
      const names = await readdir(folder).catch(() => [] as string[]);
      await Promise.all(names.map((n) => rm(path.join(folder, n), { recursive: true, force: true })));
    },
  };
}
