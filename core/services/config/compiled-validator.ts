import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ajv, Options, ValidateFunction } from 'ajv';

/**
 * Where compiled validators are kept between starts: next to the compiled core (dist/, never in git), like the
 * version probes' answers. A start then loads the config schema's validator (~14 KB of schema, the largest compile of
 * a start) instead of compiling it again.
 */
const CACHE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '.validators');
const require = createRequire(import.meta.url);
const ajvVersion = (() => {
  try {
    return (JSON.parse(readFileSync(require.resolve('ajv/package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
})();

/** An ajv instance made at its first use, and the options it is made with. */
export interface LazyAjv {
  readonly options: Options;
  get(): Ajv;
}

/**
 * An ajv made only when something is compiled (or its errors put in words). ajv is ~66 CommonJS modules and each
 * instance adds its keywords and formats; a start whose validators are all remembered (compiledValidator) needs none.
 *
 * @example const ajv = lazyAjv({ allErrors: true }); ajv.get().compile(schema)
 */
export function lazyAjv(options: Options): LazyAjv {
  let ajv: Ajv | undefined;
  return {
    options,
    get() {
      if (!ajv) {
        const { Ajv: AjvClass } = require('ajv') as typeof import('ajv');
        ajv = new AjvClass(options);
      }
      return ajv;
    },
  };
}

/**
 * `ajv.compile(schema)`, remembered on disk as ajv's standalone code: keyed by the schema, ajv's options and version,
 * so a changed schema or ajv compiles afresh. `ajv` must be made with `code: { source: true }`. When the folder cannot
 * be written (a read-only install) it just compiles. A remembered validator loads without making the ajv.
 *
 * @example const validate = compiledValidator(lazyAjv({ allErrors: true, code: { source: true } }), schema);
 */
export function compiledValidator(ajv: LazyAjv, schema: object, cacheDir = CACHE_DIR): ValidateFunction {
  // The options that shape the code (allErrors, useDefaults, strict, …); the nested ones hold functions and cycles.
  const options = Object.entries(ajv.options).filter(([, value]) => typeof value !== 'object' && typeof value !== 'function');
  const key = createHash('sha256').update(JSON.stringify({ schema, options, ajvVersion })).digest('hex').slice(0, 32);
  const file = path.join(cacheDir, `${key}.cjs`);
  try {
    return require(file) as ValidateFunction;
  } catch {
    // Not there yet (or unreadable): compiled below.
  }
  const validate = ajv.get().compile(schema);
  try {
    mkdirSync(cacheDir, { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    // ajv's runtime helpers by their full path: the file then loads wherever the folder is.
    const standaloneCode = (require('ajv/dist/standalone/index.js') as typeof import('ajv/dist/standalone/index.js')).default;
    const code = standaloneCode(ajv.get(), validate).replace(/require\("(ajv\/dist\/runtime\/[\w-]+)"\)/g, (_, name: string) => `require(${JSON.stringify(require.resolve(name))})`);
    writeFileSync(temp, code);
    renameSync(temp, file);
  } catch {
    // Kept only in memory this time.
  }
  return validate;
}
