import { readFile } from 'node:fs/promises';
import { saveConfigFile } from '../core/services/config/config-file.js';
import type { BotConfig } from '../core/services/config/schema.js';
import type { Logger } from '../core/services/log/logger.js';
import { userPart } from '../core/kernel/port/ids.js';

/**
 * Makes sure the bot's own LID is in `targetUserIds` of config.json. The transport already counts the LID as the
 * bot's id at run time; writing it down keeps the file honest (the dashboard shows it) and says so once in the log.
 * Returns the new config when the file changed, undefined when nothing had to change or the write failed (logged).
 *
 * @example
 * const updated = await addOwnLidToConfig(app.configFile, app.config, '98765@lid', log);
 * if (updated) app.bot.setConfig(updated);
 */
export async function addOwnLidToConfig(configFile: string, current: BotConfig, lid: string, log: Logger): Promise<BotConfig | undefined> {
  const digits = userPart(lid);
  if (!/^\d{3,30}$/.test(digits) || current.targetUserIds.some((id) => userPart(id) === digits)) return undefined;
  try {
    // Edit the file as written (not the defaults-filled config), so no default values are added to it.
    const raw = JSON.parse(await readFile(configFile, 'utf8')) as Record<string, unknown>;
    const ids = Array.isArray(raw.targetUserIds) ? (raw.targetUserIds as string[]) : [];
    if (ids.some((id) => userPart(id) === digits)) return undefined;
    raw.targetUserIds = [...ids, digits];
    // The plugins' own top-level sections were accepted at load; they are kept as they are.
    const updated = await saveConfigFile(configFile, raw, Object.keys(current.sections));
    log.info({ myLID: digits, file: configFile }, `added the bot's own LID ${digits} to targetUserIds in config.json, so mentions by LID are detected`);
    return updated;
  } catch (err) {
    log.warn({ myLID: digits, file: configFile, err }, `the bot's own LID ${digits} is not in targetUserIds and config.json could not be updated; mentions by LID still work while this process runs, but add ${digits} to targetUserIds`);
    return undefined;
  }
}
