#!/usr/bin/env node
import { loadSettings } from '../core/services/config/settings.js';
import { closeDatabase } from '../core/services/store/database.js';
import { exitAfterFlush } from './run.js';
import { runTokenCommand } from './token-command.js';

/** `npm run token -- create|list|revoke …`: the API tokens of DATA_DIR (see token-command.ts). */
let code = 1;
try {
  const { dataDir } = loadSettings({ requireProviderKey: false });
  try {
    code = runTokenCommand(process.argv.slice(2), { dataDir, out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });
  } finally {
    closeDatabase(dataDir);
  }
} catch (err) {
  process.stderr.write(`\nnpm run token failed: ${(err as Error).message}\n\n`);
}
exitAfterFlush(code);
