import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSettings, SettingsError } from '../core/services/config/settings.js';

/**
 * True when this account has no AI provider key anywhere (`.env` or the environment) while the rest of the settings
 * read fine: a fresh clone, nothing configured yet. A settings file with a mistake in it is not "nothing": start
 * names the mistake instead.
 */
export function nothingConfigured(cwd: string, env: NodeJS.ProcessEnv): boolean {
  try {
    loadSettings({ cwd, env });
    return false;
  } catch (err) {
    if (!(err instanceof SettingsError)) return false;
    try {
      const settings = loadSettings({ cwd, env, requireProviderKey: false });
      return !settings.primary.apiKey && !settings.second.apiKey && !settings.audio.keys.length;
    } catch {
      return false;
    }
  }
}

/**
 * `npm start` on a fresh clone in a terminal: the set-up questions first (`npm run setup`, in this process's terminal),
 * then the start goes on with what they wrote. Without a terminal nothing is asked: start refuses as before, naming
 * the variables to set. Resolves with set-up's exit code when it ran and failed or was stopped (start stops too),
 * else undefined.
 */
export async function setUpWhenNothingConfigured(options: { cwd: string; env: NodeJS.ProcessEnv; terminal: boolean; say: (text: string) => void }): Promise<number | undefined> {
  if (!options.terminal || !nothingConfigured(options.cwd, options.env)) return undefined;
  options.say('Nothing is configured yet: the set-up questions come first, then the bot starts (npm run setup changes the answers later).\n');
  const setup = path.join(path.dirname(fileURLToPath(import.meta.url)), 'setup.js');
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, [setup, '--then-start'], { cwd: options.cwd, env: options.env, stdio: 'inherit' });
    child.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
    child.on('error', () => resolve(1));
  });
  return code === 0 ? undefined : code;
}
