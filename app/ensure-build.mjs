#!/usr/bin/env node
// Installs dependencies when they are missing and compiles the TypeScript only when a source changed since the
// last good build, so `npm start` / `npm run chat` answer within a second with a current build.
// Plain JavaScript on purpose: it runs before anything is compiled. Its output goes to stderr (stdout belongs to
// the console chat protocol).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const stamp = path.join(dist, '.build-stamp');
const sourceDirs = ['app', 'cli', 'core', 'plugins', 'web', 'test', 'bench'];
// packages/*/dist is built from core/ sources, so core/ changes rebuild it too.
const force = process.argv.includes('--force');

function run(cmd, args) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

function walk(dir, visit) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, visit);
    else visit(full);
  }
}

if (!existsSync(path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'))) {
  process.stderr.write('Installing dependencies (npm ci)…\n');
  run('npm', ['ci', '--no-audit', '--no-fund']);
}

const buildConfigs = ['tsconfig.json', 'tsconfig.types.json', 'package.json', 'packages/plugin-api/tsconfig.json', 'packages/plugin-api/package.json'];
let newest = Math.max(...buildConfigs.map((file) => (existsSync(path.join(root, file)) ? statSync(path.join(root, file)).mtimeMs : 0)));
for (const dir of sourceDirs) {
  walk(path.join(root, dir), (file) => {
    if (file.endsWith('.ts')) newest = Math.max(newest, statSync(file).mtimeMs);
  });
}
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
// The declarations and the API package are outputs too: gone (a clean of packages/), they are built again.
const outputs = [path.join(dist, 'types', 'app', 'testing', 'index.d.ts'), path.join(root, 'packages', 'plugin-api', 'dist', 'index.js'), path.join(dist, 'vendor', 'typebox', 'index.js')];
if (!force && built >= newest && outputs.every((file) => existsSync(file))) process.exit(0);

// Remove compiled files whose source is gone, so a deleted test or plugin does not keep running from dist/.
for (const dir of sourceDirs) {
  walk(path.join(dist, dir), (file) => {
    const source = path.join(root, path.relative(dist, file)).replace(/\.js(\.map)?$/, '.ts');
    if (/\.js(\.map)?$/.test(file) && !existsSync(source)) rmSync(file);
  });
}
// A forced build really rebuilds: tsc's incremental state would skip emitting files that are missing or were
// edited in dist/ when their sources did not change.
if (force) rmSync(path.join(dist, '.tsbuildinfo'), { force: true });
const startedAt = Date.now();
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
run(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.json')]);
await bundleTypebox();
// The declarations of the package subpaths (dist/types/), and the packable plugin API package (packages/plugin-api/dist/):
// what a plugin in its own folder compiles and runs against.
run(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.types.json')]);
rmSync(path.join(root, 'packages', 'plugin-api', 'dist'), { recursive: true, force: true }); // nothing stale gets packed
run(process.execPath, [tsc, '-p', path.join(root, 'packages', 'plugin-api', 'tsconfig.json')]);
// tsc emits a .js for every module the entries reach, type-only ones too; a plugin loads only what the entries import
// at run time, so the rest (empty or never-run JavaScript) is not packed. Their .d.ts files stay: the types need them.
pruneUnreachable(path.join(root, 'packages', 'plugin-api', 'dist'), ['index.js', 'media.js']);
writeFileSync(stamp, String(startedAt));
// The stamp carries the time the build started: a source saved during the build still counts as newer.
utimesSync(stamp, startedAt / 1000, startedAt / 1000);

/**
 * TypeBox as one bundle in dist/vendor/typebox/ (what `#typebox` and `#typebox/value` in package.json's "imports" load):
 * its ES build is ~250 modules of a few lines each, and loading them one by one cost a start ~25 % of its CPU before
 * "console chat ready". Code splitting keeps each TypeBox module once (one TypeRegistry) across the two entries.
 */
async function bundleTypebox() {
  const { build } = await import('esbuild');
  const outdir = path.join(dist, 'vendor', 'typebox');
  rmSync(outdir, { recursive: true, force: true });
  await build({
    entryPoints: { index: '@sinclair/typebox', value: '@sinclair/typebox/value' },
    absWorkingDir: root,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir,
    logLevel: 'warning',
  });
}

/** Deletes the .js files under `dir` that no runtime import from `entries` reaches (static and dynamic imports). */
function pruneUnreachable(dir, entries) {
  const reached = new Set();
  const queue = entries.map((entry) => path.join(dir, entry));
  while (queue.length) {
    const file = queue.pop();
    if (reached.has(file) || !existsSync(file)) continue;
    reached.add(file);
    // Comments out first: a `;` in a comment inside an export list would end the statement early.
    const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    for (const [, a, b] of code.matchAll(/^(?:import|export)\s(?:[^;'"]*?\sfrom\s+)?['"](\.[^'"]+)['"]|\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/gm)) {
      queue.push(path.resolve(path.dirname(file), a ?? b));
    }
  }
  walk(dir, (file) => {
    if (file.endsWith('.js') && !reached.has(file)) rmSync(file);
  });
}
