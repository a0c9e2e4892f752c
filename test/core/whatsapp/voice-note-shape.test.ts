import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { cleanup, link, setup, type Harness } from './harness.js';

const ALICE = '6281211110000@s.whatsapp.net';

describe('WhatsApp transport: a voice note goes out with its length and waveform (fake socket, real Baileys message)', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await setup();
    await link(h);
  });
  afterEach(cleanup);

  it('the audioMessage Baileys builds carries the seconds and the 64-byte waveform given, as a ptt voice note', async () => {
    const file = `${h.dir}/reply.ogg`;
    await writeFile(file, 'OggS');
    const waveform = new Uint8Array(Array.from({ length: 64 }, (_, i) => (i * 7) % 101));
    await h.transport.sendMedia(ALICE, { kind: 'voice', path: file, seconds: 3, waveform });
    const audio = h.sockets.last.sent.at(-1)!.message!.audioMessage!;
    expect(audio.ptt).to.equal(true);
    expect(audio.seconds).to.equal(3);
    expect([...audio.waveform!]).to.deep.equal([...waveform]);
    expect(audio.mimetype).to.equal('audio/ogg; codecs=opus');
  });
});
