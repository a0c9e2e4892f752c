import * as p from '@clack/prompts';
import { ConfigError } from '../../core/services/config/config-file.js';
import { checkChatLeg, maskKey, probeModels, type LegCheck } from '../../core/services/providers/leg-check.js';
import { accountPrefix, loadAccountState, writeAccount, type AccountState } from './account-state.js';
import { accessModeFrom, AnswerError, keysFrom, ownersFrom, phoneDigits, type Answers } from './answers.js';
import { parseSetupFlags, USAGE, type SetupFlags } from './flags.js';
import { checkAudioKeys, checkSearchKey } from './key-checks.js';
import { runWizard, SetupCancelled } from './wizard.js';
import type { CliIo } from '../io.js';

/**
 * `npm run setup`: asks for (or takes as flags) the gateway, its key and model, optional audio and search keys, the
 * owner's number, the access mode, the dashboard token and how the phone links; checks each key with one tiny real
 * request; writes `.env` (0600) and `config.json` atomically, keeping everything it does not ask about.
 */
const CHECK_TIMEOUT_MS = 15_000;

/** Answers without asking: the flags, else what the account has, else the defaults. */
function answersFromFlags(state: AccountState, flags: SetupFlags): Answers {
  const c = state.current;
  const missing = [!(flags.baseUrl || c.baseUrl) && '--base-url', !(flags.apiKey || c.apiKey) && '--api-key', !(flags.model || c.model) && '--model'].filter(Boolean);
  if (missing.length) throw new AnswerError(`without a terminal to ask in, give ${missing.join(', ')} (the gateway the bot answers with). See npm run setup -- --help`);
  return {
    baseUrl: flags.baseUrl ?? c.baseUrl,
    apiKey: flags.apiKey ?? c.apiKey,
    model: flags.model ?? c.model,
    audioKeys: flags.audioKeys !== undefined ? keysFrom(flags.audioKeys) : c.audioKeys,
    audioBaseUrl: flags.audioBaseUrl ?? c.audioBaseUrl,
    searchKey: flags.searchKey !== undefined ? flags.searchKey.trim() : c.searchKey,
    searchBaseUrl: flags.searchBaseUrl ?? c.searchBaseUrl,
    owners: flags.owner !== undefined ? ownersFrom(flags.owner) : c.owners,
    accessMode: flags.access !== undefined ? accessModeFrom(flags.access) : state.configExisted && c.accessMode ? c.accessMode : flags.defaultAccess,
    dashboard: flags.dashboard ?? 'keep',
    pairingPhone: flags.pairingPhone !== undefined ? (flags.pairingPhone.trim() ? phoneDigits(flags.pairingPhone) : '') : c.pairingPhone,
  };
}

/**
 * Without --model (and none set before), the gateway's own list decides: its only model is taken; a rejected key or an
 * address nothing answers at is said at once (✘, exit 1), before anything else is checked. Undefined: stop.
 */
async function modelFromGateway(state: AccountState, flags: SetupFlags, io: CliIo, out: (line: string) => void): Promise<SetupFlags | undefined> {
  const baseUrl = flags.baseUrl ?? state.current.baseUrl;
  const apiKey = flags.apiKey ?? state.current.apiKey;
  if (flags.model || state.current.model || !baseUrl || !apiKey || flags.noCheck) return flags;
  const { models, problem } = await probeModels({ baseUrl, apiKey, timeoutMs: CHECK_TIMEOUT_MS });
  if (problem) {
    out(`✘ gateway ${baseUrl} (key ${maskKey(apiKey)}): ${problem.detail}`);
    io.stderr.write('\nNothing was written: fix what is marked ✘ above and run set-up again.\n');
    return undefined;
  }
  if (models?.length === 1) {
    out(`✔ model ${models[0]}: the only one the gateway lists`);
    return { ...flags, model: models[0] };
  }
  if (models?.length) throw new AnswerError(`give --model: the gateway lists ${models.length} models (${models.slice(0, 8).join(', ')}${models.length > 8 ? ', …' : ''})`);
  return flags;
}

const mark = (c: LegCheck) => (!c.ok ? '✘' : c.degraded ? '⚠' : '✔');

/**
 * Checks every key the answers hold. A failure of something given in this run stops the set-up (nothing written); a
 * key kept from before that fails now is reported and kept.
 */
async function checkAll(state: AccountState, answers: Answers, out: (line: string) => void): Promise<boolean> {
  const c = state.current;
  let blocking = false;
  const gateway = await checkChatLeg({ baseUrl: answers.baseUrl, apiKey: answers.apiKey, model: answers.model, timeoutMs: CHECK_TIMEOUT_MS });
  out(`${mark(gateway)} gateway ${answers.baseUrl} (model ${answers.model}, key ${maskKey(answers.apiKey)}): ${gateway.detail}`);
  if (!gateway.ok) blocking = true;
  const audioChanged = answers.audioKeys.join(',') !== c.audioKeys.join(',') || answers.audioBaseUrl !== c.audioBaseUrl;
  for (const a of await checkAudioKeys(answers.audioKeys, answers.audioBaseUrl, c.audioChatModel, CHECK_TIMEOUT_MS)) {
    out(`${mark(a)} audio key ${a.index} (${maskKey(answers.audioKeys[a.index - 1])}) at ${answers.audioBaseUrl}: ${a.detail}`);
    if (!a.ok && audioChanged) blocking = true;
  }
  if (answers.searchKey) {
    const search = await checkSearchKey(answers.searchKey, answers.searchBaseUrl || 'https://api.tavily.com', CHECK_TIMEOUT_MS);
    out(`${mark(search)} search key (${maskKey(answers.searchKey)}): ${search.detail}`);
    if (!search.ok && (answers.searchKey !== c.searchKey || answers.searchBaseUrl !== c.searchBaseUrl)) blocking = true;
  }
  return !blocking;
}

function nextSteps(state: AccountState, answers: Answers, io: CliIo, thenStart = false): string {
  const prefix = accountPrefix(state.files, io.cwd, io.env);
  const port = state.current.port;
  const link = answers.pairingPhone
    ? `the log prints "pairing code XXXXXXXX": on the phone, WhatsApp → Settings → Linked devices → Link a device → Link with phone number instead, and type it`
    : `scan the QR code (in the terminal, or at http://127.0.0.1:${port || 3000}/) with WhatsApp → Settings → Linked devices → Link a device`;
  return [
    thenStart ? 'Starting the bot now.' : `Next: ${prefix}npm start`,
    `  then ${link}.`,
    `Check this installation any time: ${prefix}npm run doctor`,
    `Chat with the bot without a phone: ${prefix}npm run chat`,
  ].join('\n');
}

async function main(io: CliIo): Promise<number> {
  let flags: SetupFlags;
  try {
    flags = parseSetupFlags(io.args);
  } catch (err) {
    io.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (flags.help) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const state = loadAccountState(io.cwd, io.env);
  const interactive = !flags.yes && io.terminal;
  if (interactive) {
    let answers: Answers;
    try {
      answers = await runWizard(state, flags, CHECK_TIMEOUT_MS);
    } catch (err) {
      if (err instanceof SetupCancelled) {
        p.cancel('Set-up stopped: nothing was written.');
        return 1;
      }
      throw err;
    }
    const written = await writeAccount(state, answers);
    p.log.success(`Wrote ${state.files.envFile} (readable by you only) and ${state.files.configFile}.`);
    if (written.newToken) p.note(`${written.newToken}\n\nIt is shown only this once. Open http://127.0.0.1:${state.current.port || 3000}/config and paste it.\n(It is kept in ${state.files.envFile} as CONFIG_TOKEN.)`, 'Dashboard token');
    p.outro(nextSteps(state, answers, io, flags.thenStart));
    return 0;
  }
  const out = (line: string) => io.stdout.write(`${line}\n`);
  const modelFlags = await modelFromGateway(state, flags, io, out);
  if (!modelFlags) return 1;
  const answers = answersFromFlags(state, modelFlags);
  if (!flags.noCheck && !(await checkAll(state, answers, out))) {
    io.stderr.write('\nNothing was written: fix what is marked ✘ above and run set-up again (or add --no-check to write without checking).\n');
    return 1;
  }
  const written = await writeAccount(state, answers);
  out(`✔ wrote ${state.files.envFile} (mode 0600) and ${state.files.configFile}`);
  out(`  owners: ${answers.owners.join(', ') || 'none (set --owner to get notices and approve new people)'}; access: ${answers.accessMode}`);
  if (written.newToken) out(`  dashboard token (shown only this once; kept in ${state.files.envFile} as CONFIG_TOKEN): ${written.newToken}`);
  out('');
  out(nextSteps(state, answers, io));
  return 0;
}

/**
 * Runs the set-up with `io` and resolves with its exit code: 0 written, 1 a check failed or a file could not be
 * written (nothing written), 2 a bad flag or answer. In a terminal (`io.terminal`, the process's own) it asks.
 */
export async function runSetup(io: CliIo): Promise<number> {
  try {
    return await main(io);
  } catch (err) {
    if (err instanceof AnswerError || err instanceof ConfigError) {
      io.stderr.write(`\nSet-up stopped: ${err.message}\nNothing was written.\n`);
      return err instanceof AnswerError ? 2 : 1;
    }
    io.stderr.write(`\nSet-up failed: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}
