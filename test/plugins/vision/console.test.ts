import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { FakeAnthropicGateway, imageOf } from '../../fakes/anthropic-messages.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat } from '../../helpers/console-chat.js';
import { testFfmpeg } from '../voice/audio-files.js';
import { makeImage } from './images.js';

describe('vision in the console chat', function () {
  this.timeout(60_000);
  let gateway: FakeAnthropicGateway;

  beforeEach(async () => {
    gateway = await FakeAnthropicGateway.start('gw');
  });
  afterEach(() => gateway.close());

  it(':image <file> what is this? is answered through /v1/messages, and a follow-up knows the answer', async () => {
    const dir = await tempDir();
    await writeConfig(dir);
    const photo = await makeImage(dir, 'cat.jpg', 'color=c=orange:s=120x90');
    const run = await runConsoleChat(`:image ${photo} what is this?\nwhat colour was it?\n`, {
      cwd: dir,
      env: { API_KEY: 'console-key-123', BASE_URL: `${gateway.url}/v1/`, MODEL: 'console-model' },
    });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.lines).to.deep.equal(['bot> gw sees: what is this?', 'bot> gw: what colour was it?']);
    const [req] = gateway.messages();
    expect(req.path).to.equal('/v1/messages');
    expect(req.json.model).to.equal('console-model');
    const image = imageOf(req);
    expect(image.mediaType).to.equal('image/jpeg');
    expect(image.data?.equals(await readFile(photo))).to.equal(true);
    const history = (gateway.chats()[0].json.messages as Array<{ content: string }>).map((m) => m.content);
    expect(history).to.include('gw sees: what is this?');
  });

  it(':video <file> <question> is looked at as frames, and :quote on it brings the same frames back', async () => {
    const dir = await tempDir();
    await writeConfig(dir);
    const clip = `${dir}/clip.mp4`;
    execFileSync(testFfmpeg(), ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=s=160x120:d=3:r=10', '-pix_fmt', 'yuv420p', clip]);
    const run = await runConsoleChat(`:video ${clip} what happens?\n:quote and at the end?\n`, {
      cwd: dir,
      env: { API_KEY: 'console-key-123', BASE_URL: gateway.url, MODEL: 'console-model' },
    });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.lines[0]).to.match(/^bot> gw sees: what happens\?/);
    expect(run.lines.some((l) => l.startsWith('bot> gw sees: and at the end?'))).to.equal(true);
    const [first, second] = gateway.messages().map((req) => (req.json.messages[0].content as Array<{ type: string; source?: { data: string } }>).filter((b) => b.type === 'image').map((b) => b.source!.data));
    expect(first).to.have.length(4);
    expect(second).to.deep.equal(first);
  });

  it(':image with a file that is not an image gets a clear reply, and the chat goes on', async () => {
    const dir = await tempDir();
    await writeConfig(dir);
    await writeFile(`${dir}/fake.png`, 'definitely not a png');
    const run = await runConsoleChat(`:image ${dir}/fake.png what is this?\n.ping\n`, {
      cwd: dir,
      env: { API_KEY: 'console-key-123', BASE_URL: gateway.url, MODEL: 'console-model' },
    });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.lines[0]).to.match(/^bot> I could not open that image/);
    expect(run.lines[1]).to.match(/^bot> pong/);
    expect(gateway.messages()).to.have.length(0);
  });
});
