import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The npm packages the office reader imports inside the jail (their own dependencies come along). */
const READER_PACKAGES = ['mammoth', 'read-excel-file', 'papaparse', 'fflate', '@xmldom/xmldom'];

/** The folder of package `name` as Node would find it from `from` (its own node_modules first, then upwards). */
function packageDir(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

let cached: Record<string, string> | undefined;

/**
 * What the jail shows the office reader at /opt/jail/lib: the compiled reader as `office-reader.mjs`, and each package
 * it needs (with their dependencies, found as Node finds them) under `node_modules/`. Packages nested inside another
 * one's folder come with it. Throws when a package is not installed.
 *
 * @example
 * await jail.run({ kind: 'code', program: '/usr/bin/node', args: ['/opt/jail/lib/office-reader.mjs', …], libraries: readerLibraries(), … });
 */
export function readerLibraries(): Record<string, string> {
  if (cached) return cached;
  const here = path.dirname(fileURLToPath(import.meta.url));
  /** Package folder → its name. */
  const found = new Map<string, string>();
  const visit = (name: string, from: string) => {
    const dir = packageDir(name, from);
    if (!dir) throw new Error(`the document reader needs the npm package ${name}, which is not installed`);
    if (found.has(dir)) return;
    found.set(dir, name);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dep, dir);
  };
  for (const name of READER_PACKAGES) visit(name, here);
  const libraries: Record<string, string> = { 'office-reader.mjs': path.join(here, 'office-reader.js') };
  const dirs = [...found.keys()];
  for (const [dir, name] of found) {
    // A package inside another one's folder (its nested node_modules) is shown with that folder already.
    if (dirs.some((other) => other !== dir && dir.startsWith(`${other}${path.sep}`))) continue;
    if (!dir.endsWith(`${path.sep}node_modules${path.sep}${name.split('/').join(path.sep)}`)) continue;
    libraries[`node_modules/${name}`] = dir;
  }
  cached = libraries;
  return libraries;
}
