#!/usr/bin/env node
import { processIo } from './io.js';
import { runSetup } from './setup/command.js';

/** `npm run setup` (cli/setup/command.ts does the work). */
process.exitCode = await runSetup(processIo());
