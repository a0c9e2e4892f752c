import * as p from '@clack/prompts';
import { checkChatLeg, maskKey, probeModels, type LegCheck } from '../../core/services/providers/leg-check.js';
import { ACCESS_MODES, accessModeFrom, AnswerError, baseUrlFrom, keysFrom, ownersFrom, phoneDigits, type Answers } from './answers.js';
import type { AccountState } from './account-state.js';
import { checkAudioKeys, checkSearchKey } from './key-checks.js';
import { GATEWAY_PRESETS, presetFor } from './presets.js';
import type { SetupFlags } from './flags.js';

/** Thrown when the owner stops set-up (Ctrl+C, or "quit"); nothing has been written. */
export class SetupCancelled extends Error {}

function answered<T>(value: T): Exclude<T, symbol> {
  if (p.isCancel(value)) throw new SetupCancelled('set-up stopped');
  return value as Exclude<T, symbol>;
}

/** A validator from a parser that throws AnswerError: its message is shown under the field. */
function validating(parse: (raw: string) => unknown) {
  return (raw: string | undefined) => {
    try {
      parse(raw ?? '');
      return undefined;
    } catch (err) {
      return err instanceof AnswerError ? err.message : String(err);
    }
  };
}

const ACCESS_WORDS: Record<string, string> = {
  pairing: 'a stranger gets a code; they can chat once an owner approves it (recommended)',
  owners: 'only the owners',
  allowList: 'the owners and the numbers in access.allow',
  everyone: 'anyone who writes to the number',
};

/**
 * The interactive set-up in a terminal: asks only what no flag answered, offers the current values, checks each key
 * with one tiny real request and says plainly what failed. Resolves with the answers, before anything is written.
 */
export async function runWizard(state: AccountState, flags: SetupFlags, timeoutMs: number): Promise<Answers> {
  const current = state.current;
  p.intro('WhatsApp assistant: set-up');
  p.log.info(`Settings file: ${state.files.envFile}${state.env.existed ? '' : ' (new)'}\nConfig file:   ${state.files.configFile}${state.configExisted ? '' : ' (new)'}`);

  // --- The chat gateway: address, key, model, then one real request.
  let baseUrl = flags.baseUrl ?? '';
  let apiKey = flags.apiKey ?? '';
  let model = flags.model ?? '';
  let ask = { url: !baseUrl, key: !apiKey, model: !model };
  for (;;) {
    if (ask.url) baseUrl = await askBaseUrl(baseUrl || current.baseUrl);
    const preset = presetFor(baseUrl);
    if (ask.key) {
      const keep = current.apiKey ? ` (Enter keeps the current key ${maskKey(current.apiKey)})` : '';
      const typed = answered(
        await p.password({
          message: `API key for ${preset?.name ?? baseUrl}${preset?.keysAt ? `, from ${preset.keysAt}` : ''}${keep}`,
          validate: (v) => (!v?.trim() && !current.apiKey ? 'a key is needed: the bot cannot answer without one' : undefined),
        }),
      );
      apiKey = typed?.trim() || current.apiKey;
    }
    let check: LegCheck | undefined;
    if (ask.model) {
      // The model list answers first: a rejected key or an address nothing answers at is said now, before any model
      // question (a model name cannot fix either).
      const spin = p.spinner();
      spin.start('Asking the gateway for its models');
      const probe = await probeModels({ baseUrl, apiKey, timeoutMs });
      spin.stop(probe.problem ? 'The gateway cannot be used as it is' : probe.models ? `The gateway offers ${probe.models.length} model(s)` : 'The gateway does not list its models: type the name');
      if (probe.problem) check = probe.problem;
      else model = await askModel(probe.models, model || current.model || preset?.model || '');
    }
    if (!check) {
      const spin = p.spinner();
      spin.start('Checking the key with one tiny request');
      check = await checkChatLeg({ baseUrl, apiKey, model, timeoutMs });
      spin.stop(check.ok ? `${check.degraded ? 'Usable' : 'Works'}: ${check.detail}` : 'The check failed');
    }
    if (check.ok) break;
    p.log.error(check.detail);
    const next = answered(
      await p.select({
        message: 'What now?',
        initialValue: fixFor(check),
        options: [
          { value: 'key', label: 'type the key again' },
          { value: 'url', label: 'change the gateway address' },
          { value: 'model', label: 'choose another model' },
          { value: 'keep', label: 'save it anyway (the bot will not answer until this works)' },
          { value: 'quit', label: 'stop here, write nothing' },
        ],
      }),
    );
    if (next === 'quit') throw new SetupCancelled('set-up stopped');
    if (next === 'keep') {
      // Saved as it is: a model is still needed for the file (the one suggested, or typed).
      if (!model) model = await askModel(undefined, current.model || preset?.model || '');
      break;
    }
    // After a failure found before the model was asked, the model is asked once the key or address is fixed.
    ask = { url: next === 'url', key: next === 'key' || next === 'url', model: next === 'model' || next === 'url' || (ask.model && !model) };
  }

  // --- Optional keys: audio (voice notes), search (live information).
  const audioBaseUrl = flags.audioBaseUrl ?? current.audioBaseUrl;
  const audioKeys = flags.audioKeys !== undefined ? keysFrom(flags.audioKeys) : await askAudioKeys(current.audioKeys, audioBaseUrl, current.audioChatModel, timeoutMs);
  const searchBaseUrl = flags.searchBaseUrl ?? current.searchBaseUrl;
  const searchKey = flags.searchKey !== undefined ? flags.searchKey.trim() : await askSearchKey(current.searchKey, searchBaseUrl, timeoutMs);

  // --- Who owns the bot, and who it answers.
  const owners =
    flags.owner !== undefined
      ? ownersFrom(flags.owner)
      : ownersFrom(
          answered(
            await p.text({
              message: 'Your own WhatsApp number, country code first (you become the owner: notices, approving new people). Several: comma-separated',
              placeholder: '6281234567890',
              initialValue: current.owners.join(','),
              validate: validating(ownersFrom),
            }),
          ) ?? '',
        );
  const accessMode =
    flags.access !== undefined
      ? accessModeFrom(flags.access)
      : answered(
          await p.select({
            message: 'Who may chat with the bot privately?',
            initialValue: state.configExisted && ACCESS_MODES.includes(current.accessMode) ? current.accessMode : flags.defaultAccess,
            // Each mode explained on its own line, not only the one the cursor is on.
            options: ACCESS_MODES.map((mode) => ({ value: mode, label: `${mode}: ${ACCESS_WORDS[mode]}` })),
          }),
        );

  // --- The /config dashboard: a token made here, shown once.
  let dashboard: Answers['dashboard'] = flags.dashboard ?? 'keep';
  if (flags.dashboard === undefined) {
    dashboard = current.configToken
      ? answered(
          await p.select({
            message: 'The /config dashboard has a token.',
            options: [
              { value: 'keep' as const, label: 'keep it' },
              { value: 'new' as const, label: 'make a new one (the old one stops working)' },
              { value: 'off' as const, label: 'turn the dashboard off' },
            ],
          }),
        )
      : answered(await p.confirm({ message: `Turn on the /config dashboard (http://127.0.0.1:${current.port}/config, behind a token)?`, initialValue: true }))
        ? 'new'
        : 'keep';
  }

  // --- How the phone links: QR (default) or a pairing code typed on the phone.
  let pairingPhone = flags.pairingPhone !== undefined ? (flags.pairingPhone.trim() ? phoneDigits(flags.pairingPhone) : '') : current.pairingPhone;
  if (flags.pairingPhone === undefined) {
    const how = answered(
      await p.select({
        message: 'How will you link the phone?',
        initialValue: current.pairingPhone ? 'code' : 'qr',
        options: [
          { value: 'qr', label: 'scan a QR code', hint: 'shown in the terminal and on the web page' },
          { value: 'code', label: 'type a pairing code on the phone', hint: "needs the bot account's number" },
        ],
      }),
    );
    pairingPhone =
      how === 'code'
        ? phoneDigits(
            answered(
              await p.text({ message: "The bot account's WhatsApp number, country code first", initialValue: current.pairingPhone || owners[0] || '', validate: validating(phoneDigits) }),
            ) ?? '',
          )
        : '';
  }
  return { baseUrl, apiKey, model, audioKeys, audioBaseUrl, searchKey, searchBaseUrl, owners, accessMode, dashboard, pairingPhone };
}

function fixFor(check: LegCheck): string {
  if (check.problem === 'rejected-key' || check.problem === 'quota') return 'key';
  if (check.problem === 'unknown-model') return 'model';
  return 'url';
}

async function askBaseUrl(current: string): Promise<string> {
  const other = '__other__';
  const options = [
    ...(current && !presetFor(current) ? [{ value: current, label: `keep ${current}` }] : []),
    ...GATEWAY_PRESETS.map((g) => ({ value: g.baseUrl, label: g.name, hint: g.baseUrl })),
    { value: other, label: 'another gateway: type its base URL' },
  ];
  const picked = answered(await p.select({ message: 'Which AI gateway (OpenAI-compatible) should the bot use?', initialValue: current || GATEWAY_PRESETS[0].baseUrl, options }));
  if (picked !== other) return picked;
  return baseUrlFrom(answered(await p.text({ message: 'Base URL of the gateway', placeholder: 'https://gateway.example.com/v1', validate: validating(baseUrlFrom) })) ?? '');
}

async function askModel(models: string[] | undefined, suggested: string): Promise<string> {
  const typeIt = async () =>
    (answered(await p.text({ message: 'Model name', initialValue: suggested, validate: (v) => (v?.trim() ? undefined : 'a model name is needed') })) ?? '').trim();
  if (!models) return typeIt();
  const other = '__other__';
  const ordered = suggested && models.includes(suggested) ? [suggested, ...models.filter((m) => m !== suggested)] : models;
  const options = [...ordered.map((m) => ({ value: m, label: m })), { value: other, label: 'another model: type its name' }];
  const picked =
    options.length > 20
      ? answered(await p.autocomplete({ message: 'Model (type to filter)', options, initialValue: ordered[0], maxItems: 10 }))
      : answered(await p.select({ message: 'Model', options, initialValue: ordered[0] }));
  return picked === other ? typeIt() : picked;
}

/** After an optional key failed its check: type it again, save it anyway, or go without (the labels name the key). */
async function afterFailedCheck(labels: { again: string; keep: string; none: string }): Promise<'again' | 'keep' | 'none'> {
  const choices = ['again', 'keep', 'none'] as const;
  return answered(await p.select({ message: 'What now?', options: choices.map((value) => ({ value, label: labels[value] })) }));
}

async function askAudioKeys(current: string[], baseUrl: string, chatModel: string, timeoutMs: number): Promise<string[]> {
  const use = answered(
    await p.confirm({
      message: current.length ? `Keep voice notes on (${current.length} audio key(s) set)?` : 'Transcribe voice notes? (needs an audio provider key, e.g. Groq: https://console.groq.com/keys)',
      initialValue: current.length > 0,
    }),
  );
  if (!use) return [];
  for (;;) {
    const typed = answered(
      await p.password({
        message: `Audio key(s), comma-separated${current.length ? ` (Enter keeps the current ${current.map(maskKey).join(', ')})` : ''}`,
        validate: (v) => (!v?.trim() && !current.length ? 'type a key, or press Ctrl+C to stop' : undefined),
      }),
    );
    const keys = typed?.trim() ? keysFrom(typed) : current;
    const spin = p.spinner();
    spin.start(`Checking ${keys.length} audio key(s) at ${baseUrl}`);
    const checks = await checkAudioKeys(keys, baseUrl, chatModel, timeoutMs);
    const failed = checks.filter((c) => !c.ok);
    spin.stop(failed.length ? `${failed.length} of ${keys.length} audio key(s) failed` : `${keys.length} audio key(s) work`);
    if (!failed.length) return keys;
    for (const f of failed) p.log.error(`audio key ${f.index} (${maskKey(keys[f.index - 1])}): ${f.detail}`);
    const next = await afterFailedCheck({ again: 'type the audio keys again', keep: 'save them anyway', none: 'no audio keys (voice notes off)' });
    if (next === 'keep') return keys;
    if (next === 'none') return [];
  }
}

async function askSearchKey(current: string, baseUrl: string, timeoutMs: number): Promise<string> {
  const use = answered(
    await p.confirm({
      message: current ? `Keep web search on (key ${maskKey(current)})?` : 'Search the web for live information? (needs a Tavily key: https://app.tavily.com)',
      initialValue: Boolean(current),
    }),
  );
  if (!use) return '';
  const base = baseUrl || 'https://api.tavily.com';
  for (;;) {
    const typed = answered(
      await p.password({
        message: `Search key${current ? ` (Enter keeps the current ${maskKey(current)})` : ''}`,
        validate: (v) => (!v?.trim() && !current ? 'type a key, or press Ctrl+C to stop' : undefined),
      }),
    );
    const key = typed?.trim() || current;
    const spin = p.spinner();
    spin.start('Checking the search key with one search');
    const check = await checkSearchKey(key, base, timeoutMs);
    spin.stop(check.ok ? `Search: ${check.detail}` : 'The search key check failed');
    if (check.ok) return key;
    p.log.error(check.detail);
    const next = await afterFailedCheck({ again: 'type the key again', keep: 'save it anyway', none: 'no web search' });
    if (next === 'keep') return key;
    if (next === 'none') return '';
  }
}
