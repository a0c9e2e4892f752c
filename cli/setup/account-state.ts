import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { saveConfigFile, sectionKeysOf } from '../../core/services/config/config-file.js';
import { accountFiles, type AccountFiles } from './account-files.js';
import { applyAnswers, readCurrent, AnswerError, type Answers, type Current } from './answers.js';
import { EnvFile } from './env-file.js';

/** One account's two files as set-up found them, and what it will write back. */
export interface AccountState {
  files: AccountFiles;
  env: EnvFile;
  config: Record<string, unknown>;
  /** config.json was there before (run again: its values are the defaults). */
  configExisted: boolean;
  current: Current;
}

/**
 * Reads the account's `.env` (or the documented `.env.example` when there is none) and `config.json` (or
 * `config.example.json`). A config.json that is not a JSON object is refused: set-up never overwrites what it cannot
 * read.
 */
export function loadAccountState(cwd: string, realEnv: NodeJS.ProcessEnv): AccountState {
  const files = accountFiles(cwd, realEnv);
  const env = EnvFile.read(files.envFile, files.envExample);
  const configExisted = existsSync(files.configFile);
  const source = configExisted ? files.configFile : files.configExample;
  let config: unknown;
  try {
    config = JSON.parse(readFileSync(source, 'utf8'));
  } catch (err) {
    throw new AnswerError(`${source} cannot be read as JSON (${(err as Error).message}). Fix it or move it away, then run set-up again.`);
  }
  if (!config || typeof config !== 'object' || Array.isArray(config)) throw new AnswerError(`${source} is not a JSON object. Fix it or move it away, then run set-up again.`);
  const record = config as Record<string, unknown>;
  return { files, env, config: record, configExisted, current: readCurrent(env, record) };
}

/**
 * Writes both files: config.json first (validated against the bot's schema, atomically, the previous one kept as
 * `.bak`), then `.env` (atomically, mode 0600). An invalid config is refused before anything is written.
 */
export async function writeAccount(state: AccountState, answers: Answers): Promise<{ newToken?: string }> {
  const result = applyAnswers(state.env, state.config, state.current, answers);
  // The plugins' own top-level sections are theirs to check (the bot checks them with each plugin's schema at start).
  await saveConfigFile(state.files.configFile, state.config, sectionKeysOf(state.config));
  await state.env.write();
  return result;
}

/** `ENV_FILE=… CONFIG_FILE=… ` when the account's files are not the defaults, so the next command reads them. */
export function accountPrefix(files: AccountFiles, cwd: string, realEnv: NodeJS.ProcessEnv): string {
  const parts: string[] = [];
  if ((realEnv.ENV_FILE ?? '').trim()) parts.push(`ENV_FILE=${files.envFile}`);
  if ((realEnv.CONFIG_FILE ?? '').trim() && files.configFile !== path.resolve(cwd, 'config.json')) parts.push(`CONFIG_FILE=${files.configFile}`);
  return parts.length ? `${parts.join(' ')} ` : '';
}
