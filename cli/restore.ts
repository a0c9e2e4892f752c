#!/usr/bin/env node
import { runRestore } from './backup/restore-command.js';
import { processIo } from './io.js';

/** `npm run restore -- <file>` (cli/backup/restore-command.ts does the work). */
process.exitCode = await runRestore(processIo());
