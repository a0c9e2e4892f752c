import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../helpers/checkout.js';

/*
 * The import graph of core/ read from the TypeScript sources, type-only imports included (the layers rules of
 * `npm run layers` run on the compiled JavaScript, where those are gone): no circle, and no arrow from a lower layer
 * up to a higher one. Layers, lowest first: core/api (coded errors, shared types) → core/kernel/port → core/services
 * → core/kernel and core/adapters (side by side; each adapter alone) → the entries (core/*.ts) and the core plugins,
 * which are built with the public entry like any plugin.
 */

/** Upward arrows still allowed, each to go with the work named (none left): a new arrow fails. Circles get none. */
const KNOWN: Record<string, string> = {};

type Layer = 'api' | 'port' | 'services' | 'kernel' | 'adapters' | 'top';
const BELOW: Record<Layer, Layer[]> = {
  api: ['api'],
  port: ['api', 'port'],
  services: ['api', 'port', 'services'],
  kernel: ['api', 'port', 'services', 'kernel'],
  adapters: ['api', 'port', 'services', 'adapters'],
  top: ['api', 'port', 'services', 'kernel', 'adapters', 'top'],
};

function layerOf(file: string): Layer {
  if (file.startsWith('core/api/')) return 'api';
  if (file.startsWith('core/kernel/port/')) return 'port';
  if (file.startsWith('core/services/')) return 'services';
  if (file.startsWith('core/kernel/core-plugins/')) return 'top';
  if (file.startsWith('core/kernel/')) return 'kernel';
  if (file.startsWith('core/adapters/')) return 'adapters';
  return 'top';
}

async function sourcesOf(dir: string): Promise<string[]> {
  return (await readdir(path.join(ROOT, dir), { recursive: true })).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => path.posix.join(dir, f.split(path.sep).join('/')));
}

/** Every relative import and re-export of each source, `import type` and `import('…')` types included. */
async function importGraph(): Promise<Map<string, Set<string>>> {
  const graph = new Map<string, Set<string>>();
  for (const file of await sourcesOf('core')) {
    // Comments out first: a `;` in a comment inside an export list would end the statement early.
    const code = (await readFile(path.join(ROOT, file), 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    const targets = new Set<string>();
    for (const [, a, b] of code.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/gm)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), (a ?? b)!)).replace(/\.js$/, '.ts');
      if (existsSync(path.join(ROOT, target))) targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected parts of more than one module (Tarjan). */
function circles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const part: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        part.push(w);
      } while (w !== v);
      if (part.length > 1) found.push(part.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the import graph of core/, type-only imports included', function () {
  let graph: Map<string, Set<string>>;
  before(async () => {
    graph = await importGraph();
  });

  it('is read (the checks below are not empty)', () => {
    expect(graph.get('core/index.ts')).to.include('core/api/errors.ts');
    expect(graph.get('core/kernel/plugin/message-context.ts')).to.include('core/kernel/plugin/ports.ts'); // an `import type`
  });

  it('has no circle', () => {
    expect(circles(graph).map((part) => `cycle ${part.join(' <> ')}`)).to.deep.equal([]);
  });

  it('has no arrow from a lower layer up to a higher one, and no adapter importing another', () => {
    const up: string[] = [];
    for (const [from, targets] of graph) {
      for (const to of targets) {
        const sideways = layerOf(from) === 'adapters' && layerOf(to) === 'adapters' && from.split('/')[2] !== to.split('/')[2];
        if (!BELOW[layerOf(from)].includes(layerOf(to)) || sideways) up.push(`up ${from} -> ${to}`);
      }
    }
    expect(up.filter((arrow) => !KNOWN[arrow])).to.deep.equal([]);
  });
});
