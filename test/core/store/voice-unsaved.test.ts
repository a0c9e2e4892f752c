import { expect } from 'chai';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { IncomingMedia } from '../../../core/kernel/port/message.js';
import { createVoicePlugin } from '../../../plugins/voice/index.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { FakeAudio, startTestBot, type TestBot } from '../../../app/testing/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { makeTone } from '../../plugins/voice/audio-files.js';

describe('voice archive: a note that could not be saved is said so', function () {
  this.timeout(30_000);
  it('answers "I could not save that voice note" instead of treating it as archived', async () => {
    const tones = await tempDir('voice-unsaved-');
    const audio = await FakeAudio.start(() => 'remember the blue door');
    const gw = await FakeGateway.start('gw');
    const t = await startTestBot([createVoicePlugin()], {
      env: { API_KEY: 'gateway-key-123456', BASE_URL: gw.url, MODEL: 'm', AUDIO_BASE_URL: `${audio.url}/v1/`, AUDIO_API_KEYS: 'audio-key-1111111' },
    });
    try {
      // A file where the archive folder should be: every write of the archive fails.
      await writeFile(path.join(t.dir, 'data', 'audio_archive'), 'not a folder');
      const bytes = makeTone(tones, 'note.ogg', 1);
      const media: IncomingMedia = { kind: 'voice', mimetype: 'audio/ogg; codecs=opus', size: bytes.length, download: async () => bytes };
      const actions = await t.transport.push({ senderId: '62811111111@s.whatsapp.net', media });
      const texts = actions.filter((a) => a.type === 'text').map((a) => (a as { text: string }).text);
      expect(texts).to.deep.equal(['I could not save that voice note: the server could not write its data (ENOTDIR).']);
      expect(t.logs().some((l) => l.level === 50 && /voice note could not be archived/.test(l.msg))).to.equal(true);
    } finally {
      await t.stop();
      await audio.close();
      await gw.close();
      await rm(tones, { recursive: true, force: true });
    }
  });
});
