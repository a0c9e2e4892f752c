import { expect } from 'chai';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import documentsPlugin from '../../../plugins/documents/index.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { FakeAudio } from '../../../app/testing/index.js';
import { startFakeSocketBot, WhatsAppMediaServer, waMessage, type FakeSocketBot } from '../../../app/testing/whatsapp.js';
import { sentText, isSentText } from '../../fakes/baileys-socket.js';
import { docx } from '../../plugins/documents/samples.js';
import { makeTone } from '../../plugins/voice/audio-files.js';
import { tempDir } from '../../helpers/checkout.js';

const ALICE = '6281200000001@s.whatsapp.net';

/** V8's full collection (`--expose-gc` turned on at run time, as mocha runs without it). */
function fullGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
const MB = 1024 * 1024;
/** Everyone answered; no status message for a slow turn (the busy machine must not change what is sent). */
const QUIET = { access: { mode: 'everyone', allow: [], block: [] }, conversation: { progressAfterSeconds: 0 } };
const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/**
 * Every download is bounded by the bytes actually received, never by the size the sender claims: through the real
 * download path (the WhatsApp transport's own fetch and decryption, real `proto` messages on the fake socket, the
 * kit's loopback WhatsApp media server serving encrypted files), a file that claims 1 KB and is served as 600 MB is cut
 * off just past the owner's limit for its kind, memory never grows by much more than that limit, and the sender is told
 * the limit. A media URL a sender points anywhere but WhatsApp's media hosts is never fetched.
 */
describe('media downloads are bounded by the bytes received (real download path, loopback media server)', function () {
  this.timeout(120_000);
  let media: WhatsAppMediaServer;
  let bot: FakeSocketBot | undefined;
  let audio: FakeAudio | undefined;

  beforeEach(async () => {
    media = await WhatsAppMediaServer.start();
  });

  afterEach(async () => {
    await bot?.stop();
    bot = undefined;
    await audio?.close();
    audio = undefined;
    await media.close();
  });

  /**
   * The memory the process holds (resident, and the Buffers outside the JS heap), sampled after a full garbage
   * collection at every MB the server sends, as the highest rise: what is still referenced, not the garbage the
   * collector has not come to yet (the server shares the process, and its made-up bytes are garbage at once).
   */
  function watchMemory(): () => { rss: number; buffers: number } {
    const collect = fullGc();
    collect();
    const start = process.memoryUsage();
    let rss = 0;
    let buffers = 0;
    let next = 0;
    media.onChunk = (sent) => {
      if (sent < next) return;
      next = sent + MB;
      collect();
      const now = process.memoryUsage();
      rss = Math.max(rss, now.rss - start.rss);
      buffers = Math.max(buffers, now.arrayBuffers - start.arrayBuffers);
    };
    return () => ({ rss, buffers });
  }

  const documentFrom = (fields: object, fileName: string, claimed?: number) =>
    waMessage({ documentMessage: { ...fields, fileName, mimetype: DOCX_MIME, ...(claimed === undefined ? {} : { fileLength: claimed }) } }, { from: ALICE });

  it('a document claiming 1 KB served as 600 MB: cut off past the limit, memory bounded by it, the sender told the limit', async () => {
    const limitMb = 8;
    bot = await startFakeSocketBot(documentsPlugin, { transport: media.transport, config: { ...QUIET, media: { maxDownloadMB: { document: limitMb } } } });
    const fields = media.serve('document', { generated: 600 * MB });
    const rise = watchMemory();
    const sent = await bot.deliver(documentFrom(fields, 'report.docx', 1000));
    expect(sent.filter(isSentText).map(sentText)).to.deep.equal([`That file is too large for me: the limit is ${limitMb} MB.`]);
    // Stopped just past the limit: far from the 600 MB served. In between are the loopback socket's buffers, which the
    // kernel grows to several MB each side under load (a run at load 20 got one 64 KiB chunk past limit + 8 MB).
    expect(media.sentBytes, 'bytes the server got out before the bot hung up').to.be.above(limitMb * MB).and.below((limitMb + 16) * MB);
    const { rss, buffers } = rise();
    // The bytes kept until the limit passed, and some MB more: stream buffers, and Buffers the collection freed whose
    // memory a background thread gives back a little later. Unbounded, both would rise by the 600 MB served.
    expect(buffers, 'Buffer memory rise').to.be.below((limitMb + 16) * MB);
    expect(rss, 'resident memory rise').to.be.below((limitMb + 48) * MB);
    expect(bot.model.requests, 'nothing reached the model').to.have.length(0);
  });

  it('the same document within the limit is read (decrypted, its MAC checked) and answered', async () => {
    bot = await startFakeSocketBot(documentsPlugin, { transport: media.transport, config: { ...QUIET } });
    const bytes = docx(['Minutes of the board', 'The budget for 2027 is 48,500 EUR.']);
    const [answer] = (await bot.deliver(documentFrom(media.serve('document', bytes), 'minutes.docx', bytes.length))).filter(isSentText).map(sentText);
    expect(answer).to.include('48,500 EUR');
  });

  it("the plugin's own smaller limit applies the same way (documents' maxDocumentBytes), whatever size is claimed", async () => {
    bot = await startFakeSocketBot(documentsPlugin, { options: { maxDocumentBytes: 2_000_000 }, transport: media.transport, config: { ...QUIET } });
    const sent = await bot.deliver(documentFrom(media.serve('document', { generated: 600 * MB }), 'big.docx', 1000));
    expect(sent.filter(isSentText).map(sentText)).to.deep.equal(['That file is too large for me: the limit is 1.9 MB.']);
    expect(media.sentBytes).to.be.below(10 * MB);
  });

  it('a voice note claiming 1 KB served as 600 MB is never sent to the audio provider; a real one is heard', async () => {
    audio = await FakeAudio.start(() => 'see you at noon');
    bot = await startFakeSocketBot(createVoicePlugin(), {
      transport: media.transport,
      env: { AUDIO_BASE_URL: `${audio.url}/v1`, AUDIO_API_KEYS: 'audio-key-1' },
      config: { ...QUIET, media: { maxDownloadMB: { voice: 4 } } },
    });
    const huge = media.serve('audio', { generated: 600 * MB });
    const sent = await bot.deliver(waMessage({ audioMessage: { ...huge, fileLength: 1000, seconds: 3, ptt: true, mimetype: 'audio/ogg; codecs=opus' } }, { from: ALICE }));
    expect(sent.filter(isSentText).map(sentText)).to.deep.equal(['That voice note is too large for me: the limit is 4 MB.']);
    expect(audio.uploads).to.have.length(0);
    // Cut off just past the 4 MB limit, far from the 600 MB served; in between the loopback socket's buffers, as for the
    // document above (a run at load 10 got 12.4 MB out).
    expect(media.sentBytes, 'bytes the server got out before the bot hung up').to.be.below((4 + 16) * MB);

    const ogg = makeTone(await tempDir('bounded-voice-'), 'note.ogg', 1.2);
    const real = media.serve('audio', ogg);
    await bot.deliver(waMessage({ audioMessage: { ...real, seconds: 1, ptt: true, mimetype: 'audio/ogg; codecs=opus' } }, { from: ALICE }));
    expect(audio.uploads).to.have.length(1);
    expect(audio.uploads[0].bytes.equals(ogg), 'the decrypted bytes are the note').to.equal(true);
  });

  it("a media URL pointing anywhere but WhatsApp's media hosts is never fetched", async () => {
    const elsewhere = await WhatsAppMediaServer.start();
    try {
      bot = await startFakeSocketBot(documentsPlugin, { transport: media.transport, config: { ...QUIET } });
      const bytes = docx(['secret']);
      const fields = elsewhere.serve('document', bytes);
      // Its url on another origin, without a directPath (the form Baileys would fetch as it is).
      const sent = await bot.deliver(waMessage({ documentMessage: { url: fields.url, mediaKey: fields.mediaKey, fileName: 'x.docx', mimetype: DOCX_MIME, fileLength: bytes.length } }, { from: ALICE }));
      expect(sent.filter(isSentText).map(sentText)).to.deep.equal(['I could not download that document. Please send it again.']);
      expect(elsewhere.sentBytes).to.equal(0);
    } finally {
      await elsewhere.close();
    }
  });
});
