import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { FakeAnthropicGateway, imageOf } from '../../fakes/anthropic-messages.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat } from '../../helpers/console-chat.js';

/** The longer side a WebP declares (VP8X canvas, or a simple VP8/VP8L frame); throws for anything not WebP. */
function webpLongerSide(bytes: Buffer): number {
  if (bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WEBP') throw new Error('not a WebP file');
  const chunk = bytes.toString('latin1', 12, 16);
  if (chunk === 'VP8X') return Math.max(1 + bytes.readUIntLE(24, 3), 1 + bytes.readUIntLE(27, 3));
  if (chunk === 'VP8 ') return Math.max(bytes.readUInt16LE(26) & 0x3fff, bytes.readUInt16LE(28) & 0x3fff);
  const bits = bytes.readUInt32LE(21);
  return Math.max(1 + (bits & 0x3fff), 1 + ((bits >> 14) & 0x3fff));
}

describe('console :sticker <file>', function () {
  this.timeout(90_000);
  let gateway: FakeAnthropicGateway;
  beforeEach(async () => {
    gateway = await FakeAnthropicGateway.start('gw');
  });
  afterEach(() => gateway.close());

  it(':sticker sends the file as a sticker message (a bare sticker is no question; vision sees its WebP bytes when asked about it), and :quote .sticker turns it into a bot [sticker]', async () => {
    const dir = await tempDir('wabot-sticker-console-');
    await writeConfig(dir);
    const file = path.join(dir, 'wave.webp');
    await promisify(execFile)('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=300x200', '-frames:v', '1', '-c:v', 'libwebp', file]);
    // :quote answers the last message that is not the bot's, so the sticker is sent again before the second quote.
    const input = `:sticker wave.webp\n:quote .sticker\n:sticker wave.webp\n:quote what is on it?\n:sticker missing.webp\n`;
    const run = await runConsoleChat(input, { cwd: dir, env: { API_KEY: 'console-key-123', BASE_URL: `${gateway.url}/v1/`, MODEL: 'console-model' } });
    expect(run.code, run.stderr).to.equal(0);
    // Only the question about it reached the model; the bare stickers were answered by nothing.
    expect(gateway.messages()).to.have.length(1);
    // The sticker reached the bot as a sticker: the vision plugin looked at exactly these bytes, as WebP.
    const [seen] = gateway.messages();
    expect(imageOf(seen!).mediaType).to.equal('image/webp');
    expect(imageOf(seen!).data!.equals(await readFile(file))).to.equal(true);
    const line = run.lines.find((l) => l.startsWith('bot [sticker] '));
    expect(run.lines[0], run.stdout + run.stderr).to.equal(line);
    expect(run.lines.filter((l) => l.startsWith('bot> '))).to.have.length(1);
    expect(run.lines.find((l) => l.startsWith('bot> '))).to.match(/^bot> gw sees: /);
    expect(line, run.stdout + run.stderr).to.be.a('string');
    expect(webpLongerSide(await readFile(line!.slice('bot [sticker] '.length)))).to.equal(512);
    expect(run.stderr).to.match(/file not found: missing\.webp/);
  });
});
