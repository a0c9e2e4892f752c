import { expect } from 'chai';
import { ApiError } from '../../../core/api/errors.js';
import { MAX_API_MEDIA_BYTES, messageContent } from '../../../core/kernel/automation/message-content.js';

/** The ApiError `messageContent(body)` rejects with (fails when it resolves). */
async function refusal(body: Record<string, unknown>): Promise<ApiError> {
  try {
    await messageContent(body);
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error(`expected a refusal of ${JSON.stringify(body).slice(0, 100)}`);
}

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xd9]);
/** An Ogg page carrying an Opus head: a voice note's first bytes. */
const OPUS = Buffer.concat([Buffer.from('OggS'), Buffer.alloc(24), Buffer.from('OpusHead'), Buffer.alloc(19)]);
const MP4 = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), Buffer.from([0, 0, 0, 0]), Buffer.from('mp42isom'), Buffer.alloc(16)]);

describe('what a bridge message may be (text, media by base64, or a poll)', () => {
  it('types media from its bytes, never from the claim: a JPEG, an MP4 video, an Ogg/Opus voice note', async () => {
    expect(await messageContent({ media: { kind: 'image', data: JPEG.toString('base64'), mimetype: 'image/jpeg' } })).to.deep.include({ media: { kind: 'image', mimetype: 'image/jpeg', data: JPEG.toString('base64') } });
    expect(((await messageContent({ media: { kind: 'video', data: MP4.toString('base64') } })) as { media: { mimetype: string } }).media.mimetype).to.equal('video/mp4');
    expect(((await messageContent({ media: { kind: 'voice', data: OPUS.toString('base64') } })) as { media: { mimetype: string } }).media.mimetype).to.equal('audio/ogg; codecs=opus');
    expect((await refusal({ media: { kind: 'voice', data: MP4.toString('base64') } })).code).to.equal('API_BAD_MEDIA');
    expect((await refusal({ media: { kind: 'voice', data: OPUS.toString('base64'), caption: 'words' } })).message).to.match(/voice note has no caption/);
    expect((await refusal({ media: { kind: 'image', data: JPEG.toString('base64'), mimetype: 'not a type' } })).code).to.equal('API_BAD_MEDIA');
  });

  it(`refuses a file over ${MAX_API_MEDIA_BYTES / 1024 / 1024} MB decoded (413) from the length of its base64, and takes one of exactly that size`, async () => {
    const exactly = Buffer.alloc(MAX_API_MEDIA_BYTES, 1).toString('base64');
    const over = Buffer.alloc(MAX_API_MEDIA_BYTES + 1, 1).toString('base64');
    const tooLarge = await refusal({ media: { kind: 'document', data: over } });
    expect([tooLarge.code, tooLarge.status]).to.deep.equal(['API_BODY_TOO_LARGE', 413]);
    const taken = (await messageContent({ media: { kind: 'document', data: exactly } })) as { media: { data: string; fileName: string; mimetype: string } };
    expect(Buffer.from(taken.media.data, 'base64').length).to.equal(MAX_API_MEDIA_BYTES);
    expect(taken.media).to.include({ fileName: 'document.bin', mimetype: 'application/octet-stream' });
  });

  it('takes base64 broken over lines, refuses a stray character and an empty file', async () => {
    const wrapped = JPEG.toString('base64').replace(/(.{8})/g, '$1\n');
    expect(((await messageContent({ media: { kind: 'image', data: wrapped } })) as { media: { data: string } }).media.data).to.equal(JPEG.toString('base64'));
    expect((await refusal({ media: { kind: 'document', data: `${JPEG.toString('base64')}*` } })).message).to.match(/not base64/);
    expect((await refusal({ media: { kind: 'document', data: '==' } })).message).to.match(/empty/);
    expect((await refusal({ media: { kind: 'document', data: '' } })).message).to.match(/bytes in base64/);
  });

  it('takes a text as it is and refuses an empty one; exactly one of text, media, poll', async () => {
    expect(await messageContent({ text: '  spaced  ' })).to.deep.equal({ text: '  spaced  ' });
    expect((await refusal({ text: '   ' })).code).to.equal('API_BAD_REQUEST');
    expect((await refusal({ text: 'a', media: { kind: 'document', data: 'AA==' } })).message).to.match(/not "text" and "media" together/);
  });
});
