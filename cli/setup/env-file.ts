import { existsSync, readFileSync } from 'node:fs';
import dotenv from 'dotenv';
import { writeFileAtomicSafe } from '../../core/services/store/atomic.js';

const ASSIGNMENT = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/;
const COMMENTED = /^\s*#\s*([A-Za-z_][A-Za-z0-9_]*)\s*=/;

/** A value as dotenv reads it back unchanged: bare when it is plain, quoted otherwise. */
function quote(value: string): string {
  if (/[\r\n]/.test(value)) throw new Error('a setting cannot hold a line break');
  if (/^[A-Za-z0-9_./:@%+,=~-]*$/.test(value)) return value;
  if (!value.includes("'")) return `'${value}'`;
  if (!value.includes('"') && !value.includes('\\')) return `"${value}"`;
  throw new Error('a setting cannot hold both kinds of quotes');
}

/**
 * A `.env` file edited in place: the lines it already has (comments, other settings, their order) stay as they are;
 * a setting that is set replaces its line, or the first commented-out line of the same name (`#API_KEY=` as in
 * `.env.example`), or is added at the end. Values are read back with dotenv, as the bot reads them.
 *
 * @example
 * const env = EnvFile.read('.env', '.env.example');
 * env.set('PRIMARY_GATEWAY_MODEL', 'gpt-4o-mini');
 * await env.write(); // atomically, mode 0600
 */
export class EnvFile {
  private constructor(readonly file: string, private lines: string[], readonly existed: boolean) {}

  /** Reads `file`; when it does not exist, starts from `template` (the documented `.env.example`) when given. */
  static read(file: string, template?: string): EnvFile {
    if (existsSync(file)) return new EnvFile(file, readFileSync(file, 'utf8').split('\n'), true);
    const start = template && existsSync(template) ? readFileSync(template, 'utf8') : '';
    return new EnvFile(file, start ? start.split('\n') : [], false);
  }

  /** Every setting with its value as the bot would read it. */
  values(): Record<string, string> {
    return dotenv.parse(this.lines.join('\n'));
  }

  get(name: string): string {
    return (this.values()[name] ?? '').trim();
  }

  set(name: string, value: string): void {
    const line = `${name}=${quote(value)}`;
    const index = this.lines.findIndex((l) => ASSIGNMENT.exec(l)?.[1] === name);
    if (index >= 0) {
      this.lines[index] = line;
      // A later duplicate would win when read: remove it so the value set here is the one read.
      this.lines = this.lines.filter((l, i) => i <= index || ASSIGNMENT.exec(l)?.[1] !== name);
      return;
    }
    const commented = this.lines.findIndex((l) => COMMENTED.exec(l)?.[1] === name);
    if (commented >= 0) {
      this.lines[commented] = line;
      return;
    }
    while (this.lines.length && this.lines[this.lines.length - 1] === '') this.lines.pop();
    this.lines.push(line, '');
  }

  text(): string {
    const text = this.lines.join('\n');
    return text.endsWith('\n') || text === '' ? text : `${text}\n`;
  }

  /** Writes the file atomically (temporary file, fsync, rename), readable by its owner only: it holds keys. */
  async write(): Promise<void> {
    await writeFileAtomicSafe(this.file, this.text(), 0o600);
  }
}
