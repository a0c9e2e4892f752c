import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../api/errors.js';
import { databaseFor, type StoreDatabase } from '../store/database.js';
import { tableOf } from '../store/sql-chat-log.js';
import { allows, formatScope, parseScopes, type Scope, type ScopeAction } from './scopes.js';

/** A token as listed: never its secret (which is not kept), only what names it and what it may do. */
export interface ApiTokenInfo {
  /** Public, the part of the token after `wabot_` (12 hex characters): names it in lists and logs. */
  id: string;
  name: string;
  scopes: Scope[];
  /** Epoch ms. */
  created: number;
  /** Epoch ms of the last request it was accepted for; undefined while never used. */
  lastUsed?: number;
}

interface Row {
  id: string;
  name: string;
  hash: string;
  scopes: string;
  created: number;
  last_used: number | null;
}

/** Token names: what the owner calls it (`home-assistant`), shown in lists and the log. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;
/** `wabot_<id>_<secret>`: the id finds the row, the whole token's hash is compared. */
const TOKEN = /^wabot_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;

/** The SHA-256 of a whole token, in hex: what the store keeps of it. */
function hashOf(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The owner's API tokens, in the store database (`data/store.db`, the `core` namespace): each a random secret shown
 * once at creation and kept only as its SHA-256 hash, with a name, scopes (scopes.ts), when it was made and last used.
 * Read from the database at each use, so a token made or revoked by `npm run token` while the bot runs counts at the
 * bot's next request. Synchronous: SQLite answers in microseconds.
 *
 * @example
 * const tokens = new ApiTokens(settings.dataDir);
 * const { token } = tokens.create('home-assistant', parseScopes('send:447700900123'));  // shown once
 * tokens.authorise(`Bearer ${token}`, 'send', '447700900123@s.whatsapp.net'); // the token's info, or an ApiError
 */
export class ApiTokens {
  private readonly table = tableOf('table', 'core', 'api-tokens');
  private preparedFor: StoreDatabase | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** The database with the table made (again after the app closed it at a stop). */
  private get db(): StoreDatabase {
    const db = databaseFor(this.dataDir);
    if (this.preparedFor !== db) {
      db.exec(`CREATE TABLE IF NOT EXISTS ${this.table} (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, hash TEXT NOT NULL, scopes TEXT NOT NULL, created INTEGER NOT NULL, last_used INTEGER)`);
      this.preparedFor = db;
    }
    return db;
  }

  /**
   * Makes a token named `name` with `scopes`: resolves with the token (the only time it exists in the clear: show it
   * once) and its info. Throws an ApiError (`API_BAD_REQUEST`) for a name that is not one or is taken, and
   * (`API_BAD_SCOPE`) for no scopes.
   */
  create(name: string, scopes: readonly Scope[]): { token: string; info: ApiTokenInfo } {
    const wanted = name.trim();
    if (!NAME.test(wanted)) throw new ApiError('API_BAD_REQUEST', 400, `"${name}" is not a token name: 1 to 64 letters, digits, spaces, dots, dashes or underscores, starting with a letter or digit`);
    if (!scopes.length) throw new ApiError('API_BAD_SCOPE', 400, 'a token needs at least one scope');
    if (this.row(wanted)) throw new ApiError('API_BAD_REQUEST', 400, `a token named "${wanted}" exists already: revoke it first or pick another name`);
    const id = randomBytes(6).toString('hex');
    const token = `wabot_${id}_${randomBytes(32).toString('base64url')}`;
    const info: ApiTokenInfo = { id, name: wanted, scopes: [...scopes], created: this.now() };
    this.db.run(`INSERT INTO ${this.table} (id, name, hash, scopes, created) VALUES (?, ?, ?, ?, ?)`, [id, wanted, hashOf(token), JSON.stringify(scopes.map(formatScope)), info.created]);
    return { token, info };
  }

  /** Every token, oldest first. */
  list(): ApiTokenInfo[] {
    return this.db.all<Row>(`SELECT * FROM ${this.table} ORDER BY created, id`).map(infoOf);
  }

  /** Revokes the token named `nameOrId` (its name or its id): resolves with it, or undefined when there is none. */
  revoke(nameOrId: string): ApiTokenInfo | undefined {
    const row = this.row(nameOrId.trim());
    if (!row) return undefined;
    this.db.run(`DELETE FROM ${this.table} WHERE id = ?`, [row.id]);
    return infoOf(row);
  }

  /**
   * The token `presented` (as given, or an `Authorization` header's `Bearer <token>`) is, when it is one: its last use
   * is set to now. Undefined for anything else — unknown, revoked, or not of the token's shape. The hashes are compared
   * in constant time.
   */
  verify(presented: string | undefined): ApiTokenInfo | undefined {
    const token = (presented ?? '').replace(/^Bearer\s+/i, '').trim();
    const id = TOKEN.exec(token)?.[1];
    if (!id) return undefined;
    const row = this.db.get<Row>(`SELECT * FROM ${this.table} WHERE id = ?`, [id]);
    if (!row || !sameHash(row.hash, hashOf(token))) return undefined;
    const lastUsed = this.now();
    this.db.run(`UPDATE ${this.table} SET last_used = ? WHERE id = ?`, [lastUsed, id]);
    return { ...infoOf(row), lastUsed };
  }

  /**
   * The token of an `Authorization` header, checked for `action` in `chatId` (`chats`: none): its info when it may,
   * else an ApiError — 401 `API_TOKEN_MISSING` without one, 401 `API_TOKEN_INVALID` for an unknown or revoked one,
   * 403 `API_SCOPE_REFUSED` outside its scopes (the message names the scope it would need).
   */
  authorise(authorization: string | undefined, action: ScopeAction, chatId?: string): ApiTokenInfo {
    const info = this.authenticate(authorization);
    if (!allows(info.scopes, action, chatId)) {
      const needed = action === 'chats' ? 'chats' : `${action}:${chatId ?? '<chat>'}`;
      throw new ApiError('API_SCOPE_REFUSED', 403, `the token "${info.name}" may not do this: it needs the scope ${needed} (it has ${info.scopes.map(formatScope).join(', ')})`);
    }
    return info;
  }

  /** The token of an `Authorization` header, whatever its scopes; the 401 ApiErrors of `authorise` otherwise. */
  authenticate(authorization: string | undefined): ApiTokenInfo {
    if (!(authorization ?? '').replace(/^Bearer\s*/i, '').trim()) throw new ApiError('API_TOKEN_MISSING', 401, 'this needs an API token: send the header "Authorization: Bearer <token>" (npm run token -- create makes one)');
    const info = this.verify(authorization);
    if (!info) throw new ApiError('API_TOKEN_INVALID', 401, 'the API token is unknown or was revoked');
    return info;
  }

  private row(nameOrId: string): Row | undefined {
    return this.db.get<Row>(`SELECT * FROM ${this.table} WHERE name = ? OR id = ?`, [nameOrId, nameOrId]);
  }
}

/** Compares two hex hashes in constant time (both are SHA-256: equal lengths). */
function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

function infoOf(row: Row): ApiTokenInfo {
  return { id: row.id, name: row.name, scopes: parseScopes(JSON.parse(row.scopes) as string[]), created: row.created, ...(row.last_used !== null ? { lastUsed: row.last_used } : {}) };
}
