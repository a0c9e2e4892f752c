import { expect } from 'chai';
import path from 'node:path';
import { ROOT, tempDir } from '../helpers/checkout.js';
import { loadInFreshProcess } from '../helpers/loaded-modules.js';
import { makeImage } from '../plugins/vision/images.js';
import { makeTone } from '../plugins/voice/audio-files.js';

/**
 * A plugin's own modules cost start-up CPU before "console chat ready": what only handling a message needs (the
 * transcriber, the archive, providers, formatting) loads at the first message, command or tool call that needs it.
 * test/app/start-modules.test.ts lists what a start may load of each plugin; here one fresh process starts a test bot
 * with every bundled plugin, answers a plain text (what the console bench sends), then the messages that are each
 * plugin's, and lists the plugin's modules loaded after each step.
 */

/** The plugins whose handling loads at first use, checked here. */
const PLUGINS = ['voice', 'vision', 'search', 'remind', 'documents', 'workspace', 'mp3', 'links', 'mcp', 'catchup', 'recall'];

interface Step {
  /** What the bot sent back. */
  texts: string[];
  /** Each plugin's modules loaded by then (file names under dist/plugins/<name>/). */
  loaded: Record<string, string[]>;
}

describe("plugins load their handling modules at the first message that is theirs, not at start", function () {
  this.timeout(120_000);
  let steps: Record<'start' | 'text' | 'audioStart' | 'voice' | 'vision' | 'search' | 'remind' | 'documents' | 'ws' | 'dl' | 'read' | 'recall', Step>;

  before(async () => {
    const dir = await tempDir('plugin-first-use-');
    const ogg = path.join(dir, 'note.ogg');
    makeTone(dir, 'note.ogg', 1.5);
    const png = await makeImage(dir, 'red.png', 'color=c=red:s=64x48');
    const script = `
      const { readFileSync } = await import('node:fs');
      const plugins = ${JSON.stringify(PLUGINS)};
      const loaded = () => {
        const urls = readFileSync(process.env.LOADED_MODULES_LOG, 'utf8').split('\\n');
        return Object.fromEntries(plugins.map((p) => [p, [...new Set(urls.filter((u) => u.includes('/dist/plugins/' + p + '/')).map((u) => u.split('/dist/plugins/' + p + '/')[1]))]]));
      };
      const texts = (actions) => actions.filter((a) => a.type === 'text').map((a) => a.text);
      const steps = {};
      // As the console bench runs: no audio key, plain text.
      const plain = await m.startTestBot('bundled');
      steps.start = { texts: [], loaded: loaded() };
      steps.text = { texts: texts(await plain.transport.push({ senderId: '62811111111@s.whatsapp.net', text: 'hello there' })), loaded: loaded() };

      // With an audio key every message is the voice plugin's (context around notes, auto reactions): a start alone.
      const audio = await m.FakeAudio.start(() => 'please pay the invoice');
      const bot = await m.startTestBot('bundled', { audio });
      steps.audioStart = { texts: [], loaded: loaded() };
      const bytes = readFileSync(${JSON.stringify(ogg)});
      const note = { kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: bytes.length, download: async () => bytes };
      steps.voice = { texts: texts(await bot.transport.push({ senderId: '62811111111@s.whatsapp.net', media: note })), loaded: loaded() };
      const picture = readFileSync(${JSON.stringify(png)});
      const photo = { kind: 'image', mimetype: 'image/png', size: picture.length, download: async () => picture };
      steps.vision = { texts: texts(await bot.transport.push({ senderId: '62811111111@s.whatsapp.net', text: 'what is this?', media: photo })), loaded: loaded() };
      steps.search = { texts: texts(await bot.transport.push({ senderId: '62811111111@s.whatsapp.net', text: '.search boiler repair' })), loaded: loaded() };
      steps.remind = { texts: texts(await bot.transport.push({ senderId: '62811111111@s.whatsapp.net', text: '.remind 10m tea' })), loaded: loaded() };
      const notes = Buffer.from('Boiler service on Friday at nine.');
      const file = { kind: 'document', mimetype: 'text/plain', fileName: 'notes.txt', size: notes.length, download: async () => notes };
      steps.documents = { texts: texts(await bot.transport.push({ senderId: '62811111111@s.whatsapp.net', text: 'when is the service?', media: file })), loaded: loaded() };
      await bot.stop();
      await audio.close();
      // Then each plugin's first command, on the bot without an audio key (after the steps above, which compare with its start).
      for (const [step, text] of [['ws', '/ws help'], ['dl', '.dl'], ['read', '.read'], ['recall', '.recall hello']]) {
        steps[step] = { texts: texts(await plain.transport.push({ senderId: '62811111111@s.whatsapp.net', text })), loaded: loaded() };
      }
      await plain.stop();
      console.log(JSON.stringify(steps));
    `;
    const { stdout } = await loadInFreshProcess(path.join(ROOT, 'dist', 'app', 'testing', 'index.js'), script);
    steps = JSON.parse(stdout.trim().split('\n').at(-2)!) as typeof steps;
  });

  /** The modules of each plugin loaded by `step` that were not loaded at start. */
  const sinceStart = (step: Step) => Object.fromEntries(PLUGINS.map((plugin) => [plugin, step.loaded[plugin]!.filter((file) => !steps.start.loaded[plugin]!.includes(file))]));
  const nothing = Object.fromEntries(PLUGINS.map((plugin) => [plugin, []]));

  it('answers a plain text (no audio key, as the console bench) without loading any more of these plugins', () => {
    expect(steps.text.texts).to.deep.equal(['model: hello there']);
    for (const plugin of PLUGINS) expect(steps.start.loaded[plugin], `${plugin}: the check is not empty`).to.include('index.js');
    expect(sinceStart(steps.text)).to.deep.equal(nothing);
  });

  it('starts with an audio key (a voice archive to look for) without loading any more of them than without', () => {
    expect(sinceStart(steps.audioStart)).to.deep.equal(nothing);
  });

  it('workspace: loads its handling (commands, service, sandbox) with the first /ws, and answers it', () => {
    expect(steps.ws.texts[0]).to.match(/^\/ws: open your workspace\n/);
    expect(steps.ws.loaded.workspace).to.include.members(['handling.js', 'commands.js', 'service.js', 'sandbox.js']);
  });

  it('mp3: loads its commands (jobs, ffmpeg, yt-dlp, the download guard) with the first .dl, and answers it', () => {
    expect(steps.dl.texts).to.deep.equal(['Send .dl with a link, e.g. .dl https://youtu.be/… (or reply .dl to a message with a link).']);
    expect(steps.dl.loaded.mp3).to.include.members(['commands.js', 'ytdlp.js', 'ffmpeg.js', 'url-guard.js']);
  });

  it('links: loads reading links with the first .read, and answers it', () => {
    expect(steps.read.texts[0]).to.match(/^\*\.read <link> \[question\]\*/);
    expect(steps.read.loaded.links).to.include.members(['reading.js', 'read-link.js', 'extract-page.js']);
  });

  it('recall: loads its formatting with the first search, and finds the plain text and its answer', () => {
    // The plain text above and the answer to it, found in the chat's log.
    expect(steps.recall.texts).to.have.length(1);
    expect(steps.recall.texts[0]).to.match(/^🔎 2 messages in this chat about "hello":\n1\. .* · me \(the bot\): model: hello there\n/);
    expect(steps.recall.loaded.recall).to.include('format.js');
  });

  it('voice: loads the transcriber and the archive with the first voice note, and answers it', () => {
    expect(steps.voice.texts).to.deep.equal(['model: please pay the invoice']);
    expect(steps.voice.loaded.voice).to.include.members(['runtime.js', 'transcriber.js', 'archive.js']);
  });

  it('vision: loads what answering about a picture needs with the first photo asked about, and answers it', () => {
    expect(steps.vision.texts).to.deep.equal(['model: what is this?']);
    expect(steps.vision.loaded.vision).to.include.members(['answer.js', 'prepare-image.js', 'video-frames.js']);
  });

  it('search: loads the provider, the backup search and formatting with the first .search, and answers it', () => {
    expect(steps.search.texts).to.deep.equal(['model: boiler repair']);
    expect(steps.search.loaded.search).to.include.members(['handling.js', 'web-search.js', 'format.js']);
  });

  it('remind: loads reading times (when.ts, with croner) with the first reminder set, and sets it', () => {
    expect(steps.remind.texts).to.have.length(1);
    expect(steps.remind.texts[0]).to.match(/^⏰ Reminder set for .+: tea$/);
    expect(steps.remind.loaded.remind).to.include('when.js');
  });

  it('documents: loads reading and answering with the first document asked about, and answers it', () => {
    // The fake model says back what it was given: the document's text, read, and the question.
    expect(steps.documents.texts).to.have.length(1);
    expect(steps.documents.texts[0]).to.match(/^model: \[sent a document\][\s\S]*\nBoiler service on Friday at nine\.\n[\s\S]* when is the service\?$/);
    expect(steps.documents.loaded.documents).to.include('reading.js');
  });
});
