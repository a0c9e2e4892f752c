import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ROOT } from './checkout.js';

const run = promisify(execFile);

/**
 * Imports one built entry in a fresh node process and reports every module that process loaded: ES modules through a
 * load hook (it runs on the loader thread, so it appends to a file), CommonJS ones from the require cache at exit, and
 * (`builtins`) Node's own modules loaded by then, internal ones included (`process.moduleLoadList`): a lazy global
 * such as `Response` loads Node's fetch (`internal/deps/undici/undici`) without any import naming it.
 * `then`: code run after the import with the entry's exports as `m` (awaited; e.g. start an app from it); it can read
 * what is loaded so far from the file named by `process.env.LOADED_MODULES_LOG` (one URL a line), and what it prints
 * comes back as `stdout`. `imported`: what went through the ES module loader only (a CommonJS package `import`ed, not
 * `require`d, is there).
 */
export async function loadInFreshProcess(entry: string, then = ''): Promise<{ loaded: string[]; imported: string[]; runtimeNames: string[]; builtins: string[]; stdout: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'entry-load-'));
  try {
    const log = path.join(dir, 'loaded.txt');
    const builtinsLog = path.join(dir, 'builtins.txt');
    const importedLog = path.join(dir, 'imported.txt');
    await writeFile(path.join(dir, 'hooks.mjs'), `import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, url + '\\n'); appendFileSync(${JSON.stringify(importedLog)}, url + '\\n'); return next(url, context); }\n`);
    await writeFile(
      path.join(dir, 'register.mjs'),
      `import { register, createRequire } from 'node:module';\nimport { appendFileSync } from 'node:fs';\nregister('./hooks.mjs', import.meta.url);\nconst cache = createRequire(import.meta.url).cache;\nprocess.on('exit', () => { appendFileSync(${JSON.stringify(log)}, Object.keys(cache).map((f) => 'file://' + f + '\\n').join('')); appendFileSync(${JSON.stringify(builtinsLog)}, process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13) + '\\n').join('')); });\n`,
    );
    const script = `const m = await import(${JSON.stringify(pathToFileURL(entry).href)}); ${then}; console.log(JSON.stringify(Object.keys(m)));`;
    const { stdout } = await run(process.execPath, ['--import', pathToFileURL(path.join(dir, 'register.mjs')).href, '--input-type=module', '-e', script], { cwd: ROOT, env: { ...process.env, LOADED_MODULES_LOG: log } });
    const loaded = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
    const builtins = (await readFile(builtinsLog, 'utf8')).split('\n').filter(Boolean);
    const imported = (await readFile(importedLog, 'utf8')).split('\n').filter(Boolean);
    return { loaded, imported, builtins, runtimeNames: JSON.parse(stdout.trim().split('\n').at(-1)!) as string[], stdout };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
