import { expect } from 'chai';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { compiledValidator, lazyAjv, type LazyAjv } from '../../../core/services/config/compiled-validator.js';
import { configSchema } from '../../../core/services/config/schema.js';

/** A fresh lazy ajv as config-file.ts makes it, counting the instances made and their compiles. */
function countingAjv(): { ajv: LazyAjv; compiles: () => number; made: () => boolean } {
  const lazy = lazyAjv({ allErrors: true, strict: false, validateSchema: false, useDefaults: false, code: { source: true } });
  let compiles = 0;
  let made = false;
  const get = () => {
    const ajv = lazy.get();
    if (!made) {
      made = true;
      const compile = ajv.compile.bind(ajv);
      ajv.compile = ((schema: object) => (compiles++, compile(schema))) as typeof ajv.compile;
    }
    return ajv;
  };
  return { ajv: { options: lazy.options, get }, compiles: () => compiles, made: () => made };
}

describe('validators remembered between starts (the config schema is not compiled again at every start)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'validators-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const bad = { prefix: '', port: 'eighty', owners: ['not digits'], unknownField: true };

  it('compiles once; a later start loads the remembered validator, which finds the same problems', () => {
    const first = countingAjv();
    const compiled = compiledValidator(first.ajv, configSchema, dir);
    expect(first.compiles()).to.equal(1);
    const later = countingAjv();
    const loaded = compiledValidator(later.ajv, configSchema, dir);
    expect(later.compiles(), 'loaded, not compiled').to.equal(0);
    expect(later.made(), 'no ajv made (ajv itself not loaded) for a remembered validator').to.equal(false);
    expect(compiled(bad)).to.equal(false);
    expect(loaded(bad)).to.equal(false);
    expect(loaded.errors).to.deep.equal(compiled.errors);
    expect(loaded.errors!.length).to.be.greaterThan(2);
    expect(loaded({ prefix: '.' })).to.equal(true);
  });

  it('compiles afresh for a changed schema', async () => {
    compiledValidator(countingAjv().ajv, { type: 'object', properties: { a: { type: 'string' } } }, dir);
    const changed = countingAjv();
    const validate = compiledValidator(changed.ajv, { type: 'object', properties: { a: { type: 'integer' } } }, dir);
    expect(changed.compiles()).to.equal(1);
    expect(validate({ a: 'x' })).to.equal(false);
    expect(await readdir(dir)).to.have.length(2);
  });

  it('still validates when the folder cannot be written', async () => {
    const file = path.join(dir, 'a-file');
    await writeFile(file, '');
    const validate = compiledValidator(countingAjv().ajv, configSchema, path.join(file, 'below-a-file'));
    expect(validate(bad)).to.equal(false);
    expect(validate({})).to.equal(true);
  });
});
