import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSettings } from '../../core/services/config/settings.js';
import { BackupError, createBackup } from '../../core/services/store/backup.js';
import { formatBytes } from '../../core/services/store/disk-space.js';
import { installedDataSchemas } from '../data-schemas.js';
import type { CliIo } from '../io.js';

/**
 * `npm run backup [-- <file>]`: one `.tar.gz` of DATA_DIR with a manifest (default `backups/` beside DATA_DIR).
 * A running bot is asked to flush and hold its writes during the copy.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const appVersion = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;

/** Runs the backup with `io` and resolves with its exit code: 0 written, 1 refused or failed (said on stderr). */
export async function runBackup(io: CliIo): Promise<number> {
  try {
    const settings = loadSettings({ cwd: io.cwd, env: io.env, requireProviderKey: false });
    const target = io.args[0];
    const result = await createBackup({ dataDir: settings.dataDir, file: target ? path.resolve(io.cwd, target) : undefined, appVersion, schemas: await installedDataSchemas(settings, io.cwd) });
    io.stdout.write(
      `Backup written: ${result.file}\n  ${result.files} files, ${formatBytes(result.bytes)} of data; ${result.online ? 'taken from the running bot with its writes held during the copy' : 'no bot was running: copied directly'}.\n` +
        '  The archive holds the WhatsApp session: keep it as secret as the account (encrypt it, e.g. age -r <key> or gpg -c).\n',
    );
    return 0;
  } catch (err) {
    io.stderr.write(`\nBackup failed: ${err instanceof BackupError ? err.message : ((err as Error).stack ?? String(err))}\n\n`);
    return 1;
  }
}
