import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import dotenv from 'dotenv';
import { projectRoot } from '../../core/services/config/config-file.js';

/** The files of one account, found the way the bot finds them (`loadSettings`). */
export interface AccountFiles {
  /** ENV_FILE (real environment only), default `.env` in the working folder. */
  envFile: string;
  /** CONFIG_FILE (real environment, then the .env file), default `config.json` in the working folder. */
  configFile: string;
  /** The documented templates the first files are made from. */
  envExample: string;
  configExample: string;
}

/**
 * Where this account's `.env` and `config.json` are. Unlike the bot, a missing ENV_FILE is not an error here:
 * set-up is what creates it.
 *
 * @example accountFiles(process.cwd(), process.env).envFile // '/srv/bot/.env'
 */
export function accountFiles(cwd: string, realEnv: NodeJS.ProcessEnv): AccountFiles {
  const envFile = path.resolve(cwd, (realEnv.ENV_FILE ?? '').trim() || '.env');
  let fromFile: Record<string, string> = {};
  try {
    if (existsSync(envFile)) fromFile = dotenv.parse(readFileSync(envFile, 'utf8'));
  } catch {
    fromFile = {};
  }
  const configSetting = (realEnv.CONFIG_FILE ?? '').trim() || (fromFile.CONFIG_FILE ?? '').trim();
  const root = projectRoot();
  return {
    envFile,
    configFile: path.resolve(cwd, configSetting || 'config.json'),
    envExample: path.join(root, '.env.example'),
    configExample: path.join(root, 'config.example.json'),
  };
}
