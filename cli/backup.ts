#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSettings } from '../core/services/config/settings.js';
import { BackupError, createBackup } from '../core/services/store/backup.js';
import { formatBytes } from '../core/services/store/disk-space.js';
import { installedDataSchemas } from './data-schemas.js';

/**
 * `npm run backup [-- <file>]`: one `.tar.gz` of DATA_DIR with a manifest (default `backups/` beside DATA_DIR).
 * A running bot is asked to flush and hold its writes during the copy.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const appVersion = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
try {
  const settings = loadSettings({ requireProviderKey: false });
  const target = process.argv[2];
  const result = await createBackup({ dataDir: settings.dataDir, file: target ? path.resolve(target) : undefined, appVersion, schemas: await installedDataSchemas(settings) });
  process.stdout.write(
    `Backup written: ${result.file}\n  ${result.files} files, ${formatBytes(result.bytes)} of data; ${result.online ? 'taken from the running bot with its writes held during the copy' : 'no bot was running: copied directly'}.\n` +
      '  The archive holds the WhatsApp session: keep it as secret as the account (encrypt it, e.g. age -r <key> or gpg -c).\n',
  );
} catch (err) {
  process.stderr.write(`\nBackup failed: ${err instanceof BackupError ? err.message : ((err as Error).stack ?? String(err))}\n\n`);
  process.exitCode = 1;
}
