import { parseArgs } from 'node:util';
import { ApiError } from '../core/api/errors.js';
import { ApiTokens, type ApiTokenInfo } from '../core/services/automation/api-tokens.js';
import { formatScope, parseScopes, SCOPE_GRAMMAR } from '../core/services/automation/scopes.js';

export const TOKEN_USAGE = `npm run token -- create --name <name> --scope <scopes>
npm run token -- list
npm run token -- revoke <name or id>

API tokens for the local HTTP API (/api/v1) of this data folder (DATA_DIR): each is shown once at creation and kept
only hashed in data/store.db. A running bot sees a new or revoked token at its next request.
  --scope   ${SCOPE_GRAMMAR}
            e.g. --scope send:447700900123,read:447700900123,chats
Exit code 0 when done, 1 when there is nothing to revoke, 2 for a mistake in the command (the message says which).`;

/** Where the command writes (the terminal; a test's buffers). */
export interface TokenCommandIo {
  dataDir: string;
  out(text: string): void;
  err(text: string): void;
}

/** A time as the owner reads it in a terminal: `2026-11-29 07:05 UTC`. */
function when(ms: number | undefined): string {
  return ms === undefined ? 'never' : `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function line(t: ApiTokenInfo): string {
  return `${t.id}  ${t.name}  created ${when(t.created)}  last used ${when(t.lastUsed)}  ${t.scopes.map(formatScope).join(',')}`;
}

/**
 * `npm run token -- create|list|revoke …` on the tokens of `io.dataDir`; resolves with the exit code. The secret is
 * printed once, by `create`, and never again by anything.
 */
export function runTokenCommand(args: string[], io: TokenCommandIo): number {
  let parsed;
  try {
    parsed = parseArgs({ args, strict: true, allowPositionals: true, options: { name: { type: 'string' }, scope: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } } });
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${TOKEN_USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    (values.help ? io.out : io.err)(`${TOKEN_USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const tokens = new ApiTokens(io.dataDir);
  try {
    if (command === 'create') {
      if (rest.length) throw new ApiError('API_BAD_REQUEST', 400, `create takes no words of its own ("${rest.join(' ')}"): give --name <name> --scope <scopes>`);
      if (!values.name) throw new ApiError('API_BAD_REQUEST', 400, 'give the token a name: --name <name> (e.g. --name home-assistant)');
      const scopes = parseScopes(values.scope ?? []);
      const { token, info } = tokens.create(values.name, scopes);
      io.out(
        `Token "${info.name}" created (id ${info.id}), scopes: ${info.scopes.map(formatScope).join(', ')}\n` +
          `Its secret is shown this once; keep it like a password (send it as "Authorization: Bearer <token>"):\n\n  ${token}\n\n`,
      );
      return 0;
    }
    if (command === 'list') {
      const all = tokens.list();
      io.out(all.length ? `${all.map(line).join('\n')}\n` : 'No API tokens. npm run token -- create --name <name> --scope <scopes> makes one.\n');
      return 0;
    }
    if (command === 'revoke') {
      if (rest.length !== 1) throw new ApiError('API_BAD_REQUEST', 400, 'say which token to revoke: npm run token -- revoke <name or id>');
      const gone = tokens.revoke(rest[0]!);
      if (!gone) {
        io.err(`No token is named or numbered "${rest[0]}": npm run token -- list shows them.\n`);
        return 1;
      }
      io.out(`Revoked "${gone.name}" (id ${gone.id}): it is refused from its next request on.\n`);
      return 0;
    }
    throw new ApiError('API_BAD_REQUEST', 400, `"${command}" is not a token command: create, list or revoke`);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    io.err(`${err.code}: ${err.message}\n\n${TOKEN_USAGE}\n`);
    return 2;
  }
}
