import { readdir, readFile, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { BufferJSON, type AuthenticationCreds } from '@whiskeysockets/baileys';
import { writeDurably, type DurableWriteOptions } from './durable-write.js';

/** The last credentials that opened a connection, beside `creds.json`. */
export const CREDS_BACKUP = 'creds.json.bak';

/** What happened when `creds.json` could not be used and the last good copy took its place. */
export interface CredsRecovery {
  /** Why creds.json could not be used (not valid JSON, a field that is not key material, missing …). */
  reason: string;
  /** Where the bad creds.json was moved, bytes kept (absent when it was missing). */
  setAside?: string;
  /** When the good copy was written (the last successful open of the connection). */
  copyFrom: Date;
}

/** Parses creds.json text (BufferJSON) and checks it with `problem`; the reason when it is not credentials. */
export function readCredsText(text: string, problem: (value: unknown) => string | undefined): { creds: AuthenticationCreds } | { problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, BufferJSON.reviver);
  } catch (err) {
    return { problem: text.trim() ? `not valid JSON: ${(err as Error).message}` : 'the file is empty' };
  }
  const why = problem(parsed);
  return why ? { problem: why } : { creds: parsed as AuthenticationCreds };
}

/**
 * Puts the last good copy in place of a corrupt (or missing) `creds.json`: the bad file is moved aside with its bytes
 * (`creds.json.corrupt-<time>`), the copy is written as creds.json atomically. Undefined when there is no good copy
 * (none, or one that does not pass the same check): then nothing is touched.
 */
export async function restoreCredsFromBackup(folder: string, reason: string, problem: (value: unknown) => string | undefined, write?: DurableWriteOptions): Promise<{ creds: AuthenticationCreds; recovery: CredsRecovery } | undefined> {
  const backup = path.join(folder, CREDS_BACKUP);
  const [text, info] = await Promise.all([readFile(backup, 'utf8').catch(() => undefined), stat(backup).catch(() => undefined)]);
  if (text === undefined || !info) return undefined;
  const read = readCredsText(text, problem);
  if (!('creds' in read)) return undefined;
  const creds = await pastStoredPreKeys(folder, read.creds);
  const credsFile = path.join(folder, 'creds.json');
  const setAside = `${credsFile}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const moved = await rename(credsFile, setAside).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    },
  );
  await writeDurably(credsFile, creds === read.creds ? text : JSON.stringify(creds, BufferJSON.replacer), { ...write, syncFolder: true });
  return { creds, recovery: { reason, setAside: moved ? setAside : undefined, copyFrom: info.mtime } };
}

/**
 * The copy's pre-key counters moved past every pre-key the folder holds. The copy dates from the last open, and
 * pre-keys made and uploaded since are on WhatsApp's server: counting from the copy's `nextPreKeyId` again would
 * make new keys under ids WhatsApp already hands out, and a contact who fetched an old one could not be read.
 */
async function pastStoredPreKeys(folder: string, creds: AuthenticationCreds): Promise<AuthenticationCreds> {
  const names = await readdir(folder).catch(() => [] as string[]);
  const highest = Math.max(0, ...names.map((n) => /^pre-key-(\d+)\.json$/.exec(n)?.[1]).filter((id): id is string => id !== undefined).map(Number));
  if (highest < creds.nextPreKeyId) return creds;
  return { ...creds, nextPreKeyId: highest + 1, firstUnuploadedPreKeyId: Math.max(creds.firstUnuploadedPreKeyId, highest + 1) };
}

/** Writes the good copy (creds.json text; call only after the connection opened with it), atomically. */
export function writeCredsBackup(folder: string, credsText: string, write?: DurableWriteOptions): Promise<void> {
  return writeDurably(path.join(folder, CREDS_BACKUP), credsText, { ...write, syncFolder: true });
}

/** The incident key of a restore (log, owner notice, dashboard). */
export const CREDS_RESTORED_INCIDENT = 'whatsapp-creds-restored';

/** What the log, the owners and the dashboard are told of a restore. */
export function credsRecoveryText(recovery: CredsRecovery, folder: string): string {
  const kept = recovery.setAside ? ` The bad file is kept as ${path.basename(recovery.setAside)}.` : '';
  return (
    `The WhatsApp credentials ${path.join(folder, 'creds.json')} could not be used (${recovery.reason}); the bot restored the last good copy ` +
    `(${CREDS_BACKUP}, from ${recovery.copyFrom.toISOString()}) and keeps the same linked device, no new QR.${kept} ` +
    `If WhatsApp refuses the restored session, relink from the dashboard.`
  );
}
