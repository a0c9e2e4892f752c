import path from 'node:path';
import { loadSettings } from '../../core/services/config/settings.js';
import { BackupError, restoreBackup } from '../../core/services/store/backup.js';
import { installedDataSchemas } from '../data-schemas.js';
import type { CliIo } from '../io.js';

/**
 * `npm run restore -- <file>`: restores a backup into DATA_DIR (refused while a bot runs on it). Resolves with the exit
 * code: 0 restored, 1 refused (said on stderr).
 */
export async function runRestore(io: CliIo): Promise<number> {
  try {
    const file = io.args[0];
    if (!file) throw new BackupError('say which backup to restore: npm run restore -- backups/<file>.tar.gz');
    const settings = loadSettings({ cwd: io.cwd, env: io.env, requireProviderKey: false });
    const result = await restoreBackup({ dataDir: settings.dataDir, file: path.resolve(io.cwd, file), schemas: await installedDataSchemas(settings, io.cwd) });
    io.stdout.write(
      `Restored ${result.manifest.files.length} files from the backup of ${result.manifest.createdAt} into ${settings.dataDir}.\n` +
        (result.keptAside ? `  The data it replaced is kept in ${result.keptAside} (delete it once the bot runs well).\n` : ''),
    );
    return 0;
  } catch (err) {
    io.stderr.write(`\nRestore refused: ${err instanceof BackupError ? err.message : ((err as Error).stack ?? String(err))}\n\n`);
    return 1;
  }
}
