#!/usr/bin/env node
import { runDoctorCommand } from './doctor/command.js';
import { processIo } from './io.js';
import { exitAfterFlush } from './run.js';

/** `npm run doctor` (cli/doctor/command.ts does the work). */
exitAfterFlush(await runDoctorCommand(processIo()));
