import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { register } from 'tsx/esm/api';
import { discoverPlugins } from '../../core/kernel/plugin/discover.js';
import { FakeGateway, completion } from '../fakes/openai-gateway.js';
import { ROOT, checkoutModulePackageJson, tempDir } from '../helpers/checkout.js';
import { startTestBot, type TestBot } from '../../app/testing/index.js';

/** Where plugin authors read the example: docs/plugin-authors/writing-a-plugin.md. */
export const EXAMPLE_PAGE = path.join('docs', 'plugin-authors', 'writing-a-plugin.md');

/** The example plugin and its test exactly as the plugin authors' page shows them (its first two ```ts blocks). */
function pageExample(): { plugin: string; test: string } {
  const page = readFileSync(path.join(ROOT, EXAMPLE_PAGE), 'utf8');
  const blocks = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
  if (blocks.length < 2) throw new Error(`${EXAMPLE_PAGE} needs the plugin and its test as its first two \`\`\`ts blocks`);
  return { plugin: blocks[0], test: blocks[1] };
}

describe('docs: the example plugin of "Writing a plugin"', () => {
  let dir: string;
  let t: TestBot | undefined;
  let gateway: FakeGateway | undefined;
  let unregister: (() => Promise<void>) | undefined;

  before(async () => {
    // Lay the example out as a plugin author would: plugins/dice/index.ts next to the project's core/ and app/ (the
    // test kit).
    dir = await tempDir('plugin-example-');
    mkdirSync(path.join(dir, 'plugins', 'dice'), { recursive: true });
    symlinkSync(path.join(ROOT, 'core'), path.join(dir, 'core'));
    symlinkSync(path.join(ROOT, 'app'), path.join(dir, 'app'));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    writeFileSync(path.join(dir, 'package.json'), checkoutModulePackageJson());
    const example = pageExample();
    writeFileSync(path.join(dir, 'plugins', 'dice', 'index.ts'), example.plugin);
    writeFileSync(path.join(dir, 'plugins', 'dice', 'dice.test.ts'), example.test);
    unregister = register();
  });
  after(async () => {
    await t?.stop();
    await gateway?.close();
    await unregister?.();
  });

  it('type-checks under the project\'s strict settings', () => {
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({ extends: path.join(ROOT, 'tsconfig.json'), compilerOptions: { noEmit: true, incremental: false, rootDir: dir, types: ['node', 'mocha'], typeRoots: [path.join(ROOT, 'node_modules', '@types')] }, include: ['plugins/**/*.ts'] }),
    );
    const result = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(dir, 'tsconfig.json')], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).to.equal('');
    expect(result.status).to.equal(0);
  });

  it('its own test passes when run with mocha, as the author would run it', () => {
    const mocha = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
    const result = spawnSync(process.execPath, ['--import', 'tsx', mocha, '--timeout', '20000', 'plugins/dice/dice.test.ts'], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    expect(result.status, result.stdout + result.stderr).to.equal(0);
    expect(result.stdout).to.match(/1 passing/);
  });

  it('is discovered from plugins/dice and answers .roll, its help text and bad input', async () => {
    const found = await discoverPlugins(path.join(dir, 'plugins'), [], dir);
    expect(found.failures).to.deep.equal([]);
    expect(found.plugins.map((p) => p.name)).to.deep.equal(['dice']);
    gateway = await FakeGateway.start('gw');
    t = await startTestBot(found.plugins, { env: { API_KEY: 'k', BASE_URL: gateway.url, MODEL: 'm' } });
    const [rolled] = t.transport.texts().concat((await t.transport.push({ text: '.roll 3d6' })).map((a) => (a as { text: string }).text));
    const match = /^🎲 (\d+) \+ (\d+) \+ (\d+) = (\d+)$/.exec(rolled);
    expect(match, rolled).to.not.equal(null);
    const dice = match!.slice(1, 4).map(Number);
    dice.forEach((d) => expect(d).to.be.within(1, 6));
    expect(Number(match![4])).to.equal(dice[0] + dice[1] + dice[2]);
    expect((await t.transport.push({ text: '.roll banana' }))[0]).to.include({ text: 'Use dice notation, for example .roll 2d6' });
    expect(((await t.transport.push({ text: '.help' }))[0] as { text: string }).text).to.include('.roll [N]d<sides>: roll dice, e.g. .roll 2d6');
  });

  it('offers its tool to the model, which can roll through it', async () => {
    gateway!.next(
      { status: 200, json: completion(null, { toolCalls: [{ id: 't1', name: 'roll_dice', arguments: '{"spec":"3d2"}' }] }) },
      (req) => ({ status: 200, json: completion(`result ${req.json.messages.at(-1).content}`) }),
    );
    const actions = await t!.transport.push({ text: 'roll three coins as dice' });
    expect((actions[0] as { text: string }).text).to.match(/^result \[[12],[12],[12]\]$/);
    expect(gateway!.chats().at(-1)!.json.messages.at(-1)).to.include({ role: 'tool', tool_call_id: 't1' });
  });
});
