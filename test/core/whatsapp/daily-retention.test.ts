import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sinon from 'sinon';
import type { DailySweeps } from '../../../core/services/store/retention.js';
import { storedChatLogText } from '../../helpers/disk-text.js';
import { tempDir } from '../../helpers/checkout.js';
import { cleanup, setup } from './harness.js';

const ALICE = '6281100000001@s.whatsapp.net';
const DAY = 24 * 3600_000;

describe("WhatsApp transport: its sent messages join the app's daily retention pass", () => {
  let clock: sinon.SinonFakeTimers | undefined;
  afterEach(async () => {
    clock?.restore();
    clock = undefined;
    await cleanup();
  });

  it('a sent message that grows past the 14-day resend window is dropped by the daily pass; after stop the pass no longer sweeps it', async () => {
    const dir = await tempDir('wabot-daily-');
    const data = path.join(dir, 'data');
    const start = Date.now();
    // Only Date is fake: the transport's timers and file work run on real time.
    clock = sinon.useFakeTimers({ now: start, toFake: ['Date'] });
    const line = (id: string, at: number, text: string) => JSON.stringify({ id, chat: ALICE, at, message: { conversation: text } });
    await mkdir(path.join(data, 'whatsapp'), { recursive: true });
    await writeFile(path.join(data, 'whatsapp', 'sent-messages.jsonl'), [line('A1', start - 13.5 * DAY, 'thirteen and a half days old'), line('B2', start - DAY, 'one day old')].join('\n') + '\n');
    const added = new Map<string, () => Promise<unknown>>();
    const dailySweeps: DailySweeps = {
      add: (name, sweep) => {
        added.set(name, sweep);
        return () => void added.delete(name);
      },
    };
    const h = await setup({ dir, transport: { dailySweeps } });
    expect(storedChatLogText(data, 'whatsapp', 'sent-messages')).to.include('thirteen and a half days old');
    expect([...added.keys()]).to.deep.equal(['whatsapp']);

    clock.setSystemTime(start + DAY);
    await added.get('whatsapp')!();
    expect(storedChatLogText(data, 'whatsapp', 'sent-messages')).not.to.include('thirteen and a half days old');
    expect(storedChatLogText(data, 'whatsapp', 'sent-messages')).to.include('one day old');

    await h.transport.stop();
    expect(added.size, 'a stopped transport leaves the pass').to.equal(0);
  });
});
