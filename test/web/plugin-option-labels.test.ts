import { expect } from 'chai';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { login, request, startWebTest, TOKEN, type WebTest } from './web-helpers.js';

/** The bundled plugins' folder (plugins/ beside test/, in the source tree and in dist/ alike). */
const PLUGINS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../plugins');

interface Field {
  plugin: string;
  path: string[];
  title: unknown;
}

interface SchemaNode {
  title?: unknown;
  type?: unknown;
  properties?: Record<string, SchemaNode>;
}

/** Every option field of every bundled plugin (nested objects and their fields too), read from its options schema. */
async function bundledOptionFields(): Promise<Field[]> {
  const fields: Field[] = [];
  for (const name of readdirSync(PLUGINS_DIR).sort()) {
    const entry = path.join(PLUGINS_DIR, name, 'index.js');
    if (!existsSync(entry)) continue;
    const plugin = ((await import(pathToFileURL(entry).href)) as { default?: { name?: string; optionsSchema?: SchemaNode } }).default;
    const walk = (schema: SchemaNode, at: string[]) => {
      for (const [key, field] of Object.entries(schema.properties ?? {})) {
        fields.push({ plugin: plugin?.name ?? name, path: [...at, key], title: field.title });
        if (field.type === 'object' && field.properties) walk(field, [...at, key]);
      }
    };
    if (plugin?.optionsSchema) walk(plugin.optionsSchema, []);
  }
  return fields;
}

/** The label the plugins view shows for one option control: a field's <label>, a nested object's <legend>, a shown-only value's label. */
function shownLabel(page: string, id: string): string | undefined {
  const patterns = [
    new RegExp(`<label for="${id}"[^>]*>([\\s\\S]*?)</label>`),
    new RegExp(`<fieldset class="nested" id="${id}"><legend>([\\s\\S]*?)</legend>`),
    new RegExp(`<span class="label" id="${id}">([\\s\\S]*?)</span>`),
  ];
  for (const pattern of patterns) {
    const found = pattern.exec(page)?.[1];
    if (found !== undefined) return found.replace(/<[^>]+>/g, '').replace(/\s*\(one per line\)$/, '').trim();
  }
  return undefined;
}

describe('dashboard: every bundled plugin option has a label in words', function () {
  this.timeout(60_000);
  let w: WebTest | undefined;
  afterEach(async () => {
    await w?.stop();
    w = undefined;
  });

  it('the plugins view labels each option of each bundled plugin with its schema title, never a camelCase key', async () => {
    const fields = await bundledOptionFields();
    // The check covers the plugins with the most options, so it cannot pass on an empty list.
    expect(new Set(fields.map((f) => f.plugin))).to.include.members(['voice', 'workspace', 'remind', 'vision', 'mp3', 'documents']);
    // Plugins discovered from plugins/ as `npm start` does.
    w = await startWebTest({ token: TOKEN });
    const { cookie } = await login(w.port, TOKEN);
    const page = (await request(w.port, { path: '/config/plugins', headers: { cookie } })).body;

    const problems: string[] = [];
    for (const field of fields) {
      const where = `plugins.${field.plugin}.${field.path.join('.')}`;
      if (typeof field.title !== 'string' || !field.title.trim()) {
        problems.push(`${where}: no title in its options schema (add Type.*({ title: 'In words', … }))`);
        continue;
      }
      const label = shownLabel(page, `opt-${field.plugin}-${field.path.join('-')}`);
      if (label === undefined) problems.push(`${where}: not shown on the plugins view`);
      else if (label !== field.title.trim()) problems.push(`${where}: labelled "${label}", not its title "${field.title}"`);
      else if (/[a-z][A-Z]/.test(label) || label === field.path.at(-1)) problems.push(`${where}: the label "${label}" is a key, not words`);
    }
    expect(problems).to.deep.equal([]);
  });
});
