/** Names no user may claim: they are, or may become, the service's own paths or are misleading. */
export const RESERVED_USERNAMES = new Set([
  'admin', 'administrator', 'api', 'app', 'assets', 'auth', 'bot', 'config', 'dashboard', 'data', 'dev', 'docs', 'favicon',
  'files', 'health', 'healthz', 'help', 'home', 'index', 'internal', 'login', 'logout', 'mail', 'media', 'metrics', 'new',
  'null', 'owner', 'plugins', 'public', 'qr', 'readyz', 'robots', 'root', 'session', 'settings', 'signin', 'signup', 'site', 'sites',
  'static', 'status', 'support', 'system', 'undefined', 'user', 'users', 'webhook', 'whatsapp', 'workspace', 'workspaces',
  'ws', 'www',
]);

/**
 * Checks a requested site username. Returns the name (lower-cased) or an error text for the user.
 * Rules: 3–30 characters, lowercase letters, digits and dashes, starting and ending with a letter or digit, no `--`,
 * not a reserved word.
 *
 * @example checkUsername('Alice-1') // { ok: true, name: 'alice-1' }
 * @example checkUsername('config') // { ok: false, reason: '…reserved…' }
 */
export function checkUsername(raw: string): { ok: true; name: string } | { ok: false; reason: string } {
  const name = String(raw ?? '').trim().toLowerCase();
  if (!name) return { ok: false, reason: 'Give a name: /ws name <username> (3–30 lowercase letters, digits or dashes).' };
  if (name.length < 3 || name.length > 30) return { ok: false, reason: 'A username has 3 to 30 characters.' };
  if (!/^[a-z0-9-]+$/.test(name)) return { ok: false, reason: 'A username may only contain lowercase letters (a–z), digits and dashes.' };
  if (name.startsWith('-') || name.endsWith('-') || name.includes('--')) return { ok: false, reason: 'A username cannot start or end with a dash or contain two dashes in a row.' };
  if (RESERVED_USERNAMES.has(name)) return { ok: false, reason: `"${name}" is reserved. Please pick another name.` };
  return { ok: true, name };
}
