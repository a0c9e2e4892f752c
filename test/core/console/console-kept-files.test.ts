import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createApp } from '../../../app/app.js';
import { ConsoleTransport } from '../../../core/adapters/console/console-transport.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';

/** The console's stdout as lines, collected as they are written. */
function collect(stream: PassThrough): string[] {
  const lines: string[] = [];
  let rest = '';
  stream.on('data', (d: Buffer) => {
    const parts = (rest + d.toString()).split('\n');
    rest = parts.pop()!;
    lines.push(...parts);
  });
  return lines;
}

describe('console: a file the bot sends and then removes', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('console-kept-');
    await writeConfig(dir, { access: { mode: 'everyone' } });
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function startConsoleBot() {
    const input = new PassThrough();
    const output = new PassThrough();
    const lines = collect(output);
    const app = await createApp({ cwd: dir, env: { PATH: process.env.PATH ?? '', API_KEY: 'sk-test', BASE_URL: 'http://127.0.0.1:9', MODEL: 'm' }, logger: createLogger({ pretty: false, destination: new PassThrough() }), skipHealthProbe: true });
    const transport = new ConsoleTransport({ input, output, errors: new PassThrough(), cwd: dir });
    await app.connect(transport);
    return { app, transport, input, lines };
  }

  it('.mydata: the printed export stays readable until the console exits, then it is gone', async () => {
    const { app, transport, input, lines } = await startConsoleBot();
    input.end('.mydata\n');
    await transport.done;
    const line = lines.find((l) => l.startsWith('bot [document] '));
    expect(line, lines.join('\n')).to.be.a('string');
    const printed = line!.slice('bot [document] '.length);
    // The bot removed its export right after sending it; the console put it back for the session.
    const exported = JSON.parse(await readFile(printed, 'utf8')) as Record<string, unknown>;
    expect(exported).to.be.an('object');
    await app.stop();
    expect(existsSync(printed), 'the export outlived the console').to.equal(false);
  });

  it('a file the bot keeps is left as it is when the console exits', async () => {
    const { app, transport, input } = await startConsoleBot();
    const kept = path.join(dir, 'kept.txt');
    await writeFile(kept, 'still here');
    await transport.sendMedia(transport.operatorChatId(), { kind: 'document', path: kept, fileName: 'kept.txt' });
    input.end('');
    await transport.done;
    await app.stop();
    expect(await readFile(kept, 'utf8')).to.equal('still here');
  });
});
