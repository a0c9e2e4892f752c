import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { FakeBehaviour, RecordedRequest } from '../../../app/testing/http-fake.js';
import { FakeGateway, completion } from '../../fakes/openai-gateway.js';
import { FakeSearchProvider } from '../../fakes/search-provider.js';
import { ROOT, tempDir, writeConfig } from '../../helpers/checkout.js';

/** The main model: searches, then answers from what it found. */
function model(req: RecordedRequest): FakeBehaviour {
  const messages = (req.json?.messages ?? []) as Array<{ role: string }>;
  if (messages.some((m) => m.role === 'tool')) return { status: 200, json: completion('found it') };
  return { status: 200, json: completion(null, { toolCalls: [{ id: 'call-search', name: 'web_search', arguments: JSON.stringify({ query: 'stars' }) }] }) };
}

describe('progress on long turns in the console', function () {
  this.timeout(60_000);
  let gateway: FakeGateway;
  let search: FakeSearchProvider;

  beforeEach(async () => {
    gateway = await FakeGateway.start('gw', model);
    search = await FakeSearchProvider.start();
  });
  afterEach(async () => {
    await gateway.close();
    await search.close();
  });

  it('prints the status of a long turn once (the console cannot edit), then the answer', async () => {
    const dir = await tempDir();
    await writeConfig(dir, { access: { mode: 'everyone', allow: [], block: [] }, port: 0, conversation: { progressAfterSeconds: 1 } });
    const held = search.holdNext();
    const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'cli', 'chat.js')], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', API_KEY: 'sk-test-123456', BASE_URL: `${gateway.url}/v1`, MODEL: 'main', SEARCH_API_KEY: 'tvly-test-123', SEARCH_BASE_URL: search.url },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    // The status names what runs when it goes out: the search, or (on a machine too busy for the model's answer to
    // come within the second) the default phrase. Which one is a matter of timing; that it is printed once is not.
    const STATUS = /^bot> (?:searching the web…|working on it…)$/;
    const statusPrinted = new Promise<void>((resolve) =>
      child.stdout.on('data', (d) => {
        stdout += d;
        if (stdout.split('\n').some((l) => STATUS.test(l))) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.stdin.end('how many stars are there?\n');
    await held.received;
    // The search is held until the status is out: the turn is long for certain, whatever the machine's speed.
    await statusPrinted;
    held.release();
    expect(await exited, stderr).to.equal(0);
    const lines = stdout.split('\n').filter((l) => l.length);
    expect(lines[0]).to.match(STATUS);
    expect(lines[1]).to.equal('bot> found it');
    // Every other line continues the answer (its sources): no status again, no final state printed.
    expect(lines.slice(2).every((l) => l.startsWith('  ')), stdout).to.equal(true);
  });
});
