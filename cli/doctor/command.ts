import { parseArgs } from 'node:util';
import { secretValues } from '../../core/services/config/settings.js';
import { accountFiles } from '../setup/account-files.js';
import { EnvFile } from '../setup/env-file.js';
import { runDoctor, type DoctorCheck } from './checks.js';
import type { CliIo } from '../io.js';

/**
 * `npm run doctor`: checks this installation without starting the bot or taking its lock — Node, the build, `.env`
 * and `config.json`, each provider leg with one tiny real request, audio and search keys, the jail, ffmpeg, python,
 * yt-dlp, free disk, the store database and any files of an earlier layout, the WhatsApp session, a running bot, the web port. One line each with the fix;
 * exit 0 when nothing is ✘, 1 otherwise; `--json` for machines. Never prints a key.
 */
const USAGE = `npm run doctor [-- --json]

Checks the installation without starting the bot. One line per check: ✔ fine, ⚠ works with a limit, ✘ broken (with
the fix). Exit code 0 when nothing is ✘, 1 otherwise. --json prints { ok, checks: [{ name, status, detail, fix }] }.`;

const MARK = { ok: '✔', warn: '⚠', fail: '✘' } as const;

/** Every secret the account holds, cut out of anything printed (a gateway may echo a key in its error text). */
function redactor(secrets: string[]): (text: string) => string {
  const sorted = [...new Set(secrets.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  return (text) => sorted.reduce((out, secret) => out.split(secret).join('[redacted]'), text);
}

async function main(io: CliIo): Promise<number> {
  let json = false;
  try {
    const { values } = parseArgs({ args: io.args, strict: true, options: { json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } } });
    if (values.help) {
      io.stdout.write(`${USAGE}\n`);
      return 0;
    }
    json = values.json ?? false;
  } catch (err) {
    io.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const { cwd, env } = io;
  const { checks, secrets } = await runDoctor({ cwd, env, networkTimeoutMs: 8000, checkTimeoutMs: 20_000 });
  const fileValues = EnvFile.read(accountFiles(cwd, env).envFile).values();
  const redact = redactor([...secrets, ...secretValues({ ...fileValues, ...env })]);
  const failed = checks.some((c) => c.status === 'fail');
  if (json) {
    io.stdout.write(`${redact(JSON.stringify({ ok: !failed, checks: checks.map((c: DoctorCheck) => ({ ...c, mark: MARK[c.status] })) }, null, 2))}\n`);
  } else {
    const width = Math.max(...checks.map((c) => c.name.length));
    for (const c of checks) io.stdout.write(`${redact(`${MARK[c.status]} ${c.name.padEnd(width)}  ${c.detail}${c.fix ? ` → ${c.fix}` : ''}`)}\n`);
    const counts = { fail: checks.filter((c) => c.status === 'fail').length, warn: checks.filter((c) => c.status === 'warn').length };
    io.stdout.write(`\n${failed ? `${counts.fail} problem(s) to fix (✘)` : 'Nothing broken'}${counts.warn ? `, ${counts.warn} limit(s) (⚠)` : ''}.\n`);
  }
  return failed ? 1 : 0;
}

/** Runs the doctor with `io` and resolves with its exit code: 0 nothing is ✘, 1 something is, 2 a bad flag. */
export async function runDoctorCommand(io: CliIo): Promise<number> {
  try {
    return await main(io);
  } catch (err) {
    io.stderr.write(`doctor failed: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}
