#!/usr/bin/env node
import { runBackup } from './backup/backup-command.js';
import { processIo } from './io.js';

/** `npm run backup [-- <file>]` (cli/backup/backup-command.ts does the work). */
process.exitCode = await runBackup(processIo());
