#!/usr/bin/env node
import { loadSettings } from '../core/services/config/settings.js';
import { BackupError, restoreBackup } from '../core/services/store/backup.js';
import { installedDataSchemas } from './data-schemas.js';

/** `npm run restore -- <file>`: restores a backup into DATA_DIR (refused while a bot runs on it). */
try {
  const file = process.argv[2];
  if (!file) throw new BackupError('say which backup to restore: npm run restore -- backups/<file>.tar.gz');
  const settings = loadSettings({ requireProviderKey: false });
  const result = await restoreBackup({ dataDir: settings.dataDir, file, schemas: await installedDataSchemas(settings) });
  process.stdout.write(
    `Restored ${result.manifest.files.length} files from the backup of ${result.manifest.createdAt} into ${settings.dataDir}.\n` +
      (result.keptAside ? `  The data it replaced is kept in ${result.keptAside} (delete it once the bot runs well).\n` : ''),
  );
} catch (err) {
  process.stderr.write(`\nRestore refused: ${err instanceof BackupError ? err.message : ((err as Error).stack ?? String(err))}\n\n`);
  process.exitCode = 1;
}
