import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { copyFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { FakeAudio } from '../../../app/testing/index.js';
import { FakeGateway, lastUserText } from '../../fakes/openai-gateway.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';
import { runConsoleChat } from '../../helpers/console-chat.js';
import { makeTone } from './audio-files.js';

describe('voice in the console', function () {
  this.timeout(90_000);
  let audio: FakeAudio;
  let gw: FakeGateway;
  let dir: string;
  /** The voice note, made once: each test gets its own copy in its own folder. */
  let note: string;
  let fixtures: string;

  before(async () => {
    fixtures = await tempDir('voice-console-note-');
    makeTone(fixtures, 'note.ogg', 1.5);
    note = path.join(fixtures, 'note.ogg');
  });
  after(() => rm(fixtures, { recursive: true, force: true }));

  beforeEach(async () => {
    audio = await FakeAudio.start(() => 'remind me to buy milk');
    gw = await FakeGateway.start('gw');
    dir = await tempDir('voice-console-');
    await writeConfig(dir, { plugins: { voice: { reactions: { enabled: false } } } });
    await copyFile(note, path.join(dir, 'note.ogg'));
  });

  afterEach(async () => {
    await audio.close();
    await gw.close();
    await rm(dir, { recursive: true, force: true });
  });

  it(':voice <file> is transcribed by the audio provider, answered, archived and found with .vn', async () => {
    const run = await runConsoleChat(':voice note.ogg\n.vn milk\n:group family\n:voice note.ogg\n.ping\n', {
      cwd: dir,
      env: { API_KEY: 'gateway-key-123456', BASE_URL: gw.url, MODEL: 'main-model', AUDIO_API_KEYS: 'console-audio-key-1', AUDIO_BASE_URL: audio.url, AUDIO_MODEL: 'whisper-test' },
    });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.lines[0]).to.equal('bot> gw: remind me to buy milk');
    expect(run.lines[1]).to.match(/^bot> 🎤 1 voice note in this chat about "milk":/);
    expect(run.lines[2]).to.include('"remind me to buy milk"');
    // The group note is archived but not answered (not addressed), and so is the group's .ping without a mention.
    expect(run.lines.slice(3).every((l) => !l.includes('remind me'))).to.equal(true);
    expect(audio.uploads.map((u) => u.fileName)).to.deep.equal(['voice.ogg', 'voice.ogg']);
    expect(lastUserText(gw.chats()[0])).to.equal('remind me to buy milk');
    expect(readdirSync(path.join(dir, 'data', 'audio_archive', 'family@g.us', 'audio'))).to.have.length(1).and.satisfy((names: string[]) => /^msg-.+\.ogg$/.test(names[0]));
    expect(run.stderr).to.not.include('console-audio-key-1');
  });

  it(':quote on a voice note and :reply on the bot\'s voice reply are answered from their words, with no second transcription', async () => {
    const run = await runConsoleChat(':voice note.ogg\n:quote what did I ask for?\n.voice on\n:voice note.ogg\n:reply say that again\n', {
      cwd: dir,
      env: { API_KEY: 'gateway-key-123456', BASE_URL: gw.url, MODEL: 'main-model', AUDIO_API_KEYS: 'console-audio-key-1', AUDIO_BASE_URL: audio.url, AUDIO_SPEECH_MODEL: 'tts-test', AUDIO_SPEECH_VOICE: 'nova' },
    });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.lines[0]).to.equal('bot> gw: remind me to buy milk');
    expect(run.lines[1]).to.equal('bot> gw: what did I ask for?');
    expect(JSON.stringify(gw.chats()[1]!.json.messages)).to.contain('<<<CONTENT\\nremind me to buy milk\\nCONTENT>>>');
    expect(run.lines[2]).to.match(/^bot> Voice replies are on in this chat/);
    expect(run.lines[3]).to.match(/^bot \[audio\] .*\.ogg$/);
    expect(run.lines[4]).to.equal('bot> gw: say that again');
    expect(JSON.stringify(gw.chats().at(-1)!.json.messages)).to.contain('your own words').and.to.contain('<<<CONTENT\\ngw: remind me to buy milk\\nCONTENT>>>');
    // Two notes sent, two heard: neither quote was transcribed again.
    expect(audio.uploads).to.have.length(2);
  });

  it('without an audio key the console says the bot cannot hear', async () => {
    const run = await runConsoleChat(':voice note.ogg\n.ping\n', {
      cwd: dir,
      env: { API_KEY: 'gateway-key-123456', BASE_URL: gw.url, MODEL: 'main-model', AUDIO_BASE_URL: audio.url },
    });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.lines[0]).to.match(/^bot> I can't hear voice notes right now: no audio key is configured/);
    expect(run.lines[1]).to.match(/^bot> pong/);
    expect(run.stderr).to.match(/no audio key/);
    expect(audio.uploads).to.have.length(0);
  });
});
