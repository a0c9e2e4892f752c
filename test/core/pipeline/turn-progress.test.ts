import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { PROGRESS_DONE, TurnProgress, type PacedSend } from '../../../core/kernel/pipeline/progress.js';
import type { Transport } from '../../../core/kernel/port/transport.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { SendCancelledError } from '../../../core/services/sending/outbox.js';

/** A promise and the function that settles it: the test decides when each step happens, never a sleep. */
function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

const CHAT = '10000000001@s.whatsapp.net';

/**
 * Everything the chat shows, in order: the status sends, its edits, and the answer (sent by the test after
 * `beforeSpeaking`, as the core's replies do).
 */
function recordingTransport(held?: Promise<void>) {
  const shown: string[] = [];
  let sends = 0;
  const sendStarted = gate();
  const sendDone = gate();
  const transport = {
    async sendText(_chat: string, text: string) {
      sendStarted.open();
      if (held) await held;
      shown.push(`send: ${text}`);
      sendDone.open();
      return { id: `status-${++sends}` };
    },
    async editText(_chat: string, id: string, text: string) {
      shown.push(`edit ${id}: ${text}`);
      return true;
    },
  } as unknown as Transport;
  return { transport, shown, sendStarted: sendStarted.promise, sent: sendDone.promise };
}

/** A sending queue with nothing in front: a send goes at once unless it was called off. */
const unqueued =
  (transport: Transport): PacedSend =>
  (_chat, send, signal) =>
    signal.aborted ? Promise.reject(new SendCancelledError()) : send(transport);

describe('the status of a long turn never comes after its answer (deterministic, gated steps)', () => {
  // The edits' pace reads this clock: moved past the interval before the final edit, so it goes at once.
  let clock = 0;
  const now = () => clock;
  beforeEach(() => (clock = 0));
  const log = createLogger({ level: 'silent', pretty: false, destination: new PassThrough() });

  it('a status send still waiting for its turn in the sending queue when the answer is due is dropped', async () => {
    const { transport, shown } = recordingTransport();
    const queueTurn = gate();
    const waiting = gate();
    const paced: PacedSend = async (_chat, send, signal) => {
      waiting.open();
      await queueTurn.promise;
      if (signal.aborted) throw new SendCancelledError();
      return send(transport);
    };
    const progress = new TurnProgress({ chatId: CHAT, afterSeconds: 0.001, paced, log, now });
    progress.start();
    await waiting.promise;
    await progress.beforeSpeaking();
    shown.push('answer');
    queueTurn.open();
    await progress.finish(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(shown).to.deep.equal(['answer']);
  });

  it('a status already handed to the network is waited for before the answer goes, then marked done by an edit', async () => {
    const network = gate();
    const { transport, shown, sendStarted } = recordingTransport(network.promise);
    const progress = new TurnProgress({ chatId: CHAT, afterSeconds: 0.001, paced: unqueued(transport), log, now });
    progress.start();
    await sendStarted;
    let spoke = false;
    const speaking = progress.beforeSpeaking().then(() => {
      spoke = true;
      shown.push('answer');
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(spoke, 'the answer waits while the status is on the network').to.equal(false);
    network.open();
    await speaking;
    clock += 60_000;
    await progress.finish(false);
    expect(shown).to.deep.equal(['send: working on it…', 'answer', `edit status-1: ${PROGRESS_DONE}`]);
  });

  it('on a network that cannot edit (the console): the status is shown once, and the turn ends without an edit or a wait for one', async () => {
    const { transport, shown, sent } = recordingTransport();
    const progress = new TurnProgress({ chatId: CHAT, afterSeconds: 0.001, paced: unqueued(transport), log, now, edits: false });
    progress.start();
    await sent;
    progress.set('searching the web…');
    await progress.beforeSpeaking();
    shown.push('answer');
    // The clock stays where it was: an edit would wait its interval; finishing must not.
    const ended = await Promise.race([progress.finish(false).then(() => 'finished'), new Promise((resolve) => setImmediate(() => resolve('still waiting')))]);
    expect(ended).to.equal('finished');
    expect(shown).to.deep.equal(['send: working on it…', 'answer']);
  });

  it('a phrase set after the answer went edits nothing but the final state', async () => {
    const { transport, shown, sent } = recordingTransport();
    const progress = new TurnProgress({ chatId: CHAT, afterSeconds: 0.001, paced: unqueued(transport), log, now });
    progress.start();
    await sent;
    await progress.beforeSpeaking();
    shown.push('answer');
    progress.set('searching the web…');
    clock += 60_000;
    await progress.finish(false);
    expect(shown).to.deep.equal(['send: working on it…', 'answer', `edit status-1: ${PROGRESS_DONE}`]);
  });
});
