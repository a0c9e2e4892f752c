import { expect } from 'chai';
import sinon from 'sinon';
import { DEFAULT_CONNECTION_CONFIG, proto } from '@whiskeysockets/baileys';
import { BOT_ME, DisconnectReason, waText } from '../../fakes/baileys-socket.js';
import { fakeClockPerTest, link, setup, swJs } from './harness.js';

/** The revisions the stubbed web.whatsapp.com/sw.js serves, one per fetch; `fail` answers HTTP 503. */
function serveRevisions(...answers: Array<number | 'fail'>): sinon.SinonStub {
  const stub = sinon.stub(globalThis, 'fetch');
  answers.forEach((a, i) => stub.onCall(i).callsFake(async () => (a === 'fail' ? new Response('down', { status: 503, statusText: 'Service Unavailable' }) : swJs(a))));
  stub.callsFake(async () => swJs(answers.filter((a) => a !== 'fail').at(-1) as number));
  return stub;
}

describe('WhatsApp transport: Web version, close codes and reconnect bounds (fake socket)', () => {
  const clock = fakeClockPerTest();

  it('fetches the Web version before connecting, does not keep a failed fetch, and refreshes a good one after hours', async () => {
    const fetches = serveRevisions('fail', 1000000002, 1000000003);
    const h = await setup();
    // The fetch failed: Baileys' bundled version is used, and the next connection asks again.
    expect(h.sockets.last.options.version).to.equal(undefined);
    expect(h.messages().some((m) => m.includes('could not fetch the current WhatsApp Web version'))).to.equal(true);
    h.sockets.last.close(DisconnectReason.connectionClosed);
    await clock.tickAsync(h.transport.session().retryAt! - Date.now());
    await h.sockets.waitForSockets(2);
    expect(h.sockets.last.options.version).to.deep.equal([2, 3000, 1000000002]);
    expect(fetches.callCount).to.equal(2);
    // Reused while fresh …
    h.sockets.last.open();
    h.sockets.last.close(DisconnectReason.connectionClosed);
    await clock.tickAsync(h.transport.session().retryAt! - Date.now());
    await h.sockets.waitForSockets(3);
    expect(fetches.callCount).to.equal(2);
    expect(h.sockets.last.options.version).to.deep.equal([2, 3000, 1000000002]);
    // … fetched again hours later.
    h.sockets.last.open();
    await clock.tickAsync(7 * 60 * 60_000);
    h.sockets.last.close(DisconnectReason.connectionClosed);
    await clock.tickAsync(h.transport.session().retryAt! - Date.now());
    await h.sockets.waitForSockets(4);
    expect(fetches.callCount).to.equal(3);
    expect(h.sockets.last.options.version).to.deep.equal([2, 3000, 1000000003]);
  });

  it('405 (client too old): fetches the current version at once, reconnects with it, says so, and recovers', async () => {
    serveRevisions(1000000001, 1000000009);
    const h = await setup();
    await link(h);
    expect(h.sockets.last.options.version).to.deep.equal([2, 3000, 1000000001]);
    const count = h.sockets.sockets.length;
    h.sockets.last.close(405, 'Connection Failure');
    const session = h.transport.session();
    expect(session.problem).to.equal('client-too-old');
    expect(session.lastError).to.include('client version too old (405)');
    expect(h.notices.map((n) => `${n.kind}:${n.key}`)).to.deep.equal(['raise:whatsapp-client-too-old']);
    expect(h.messages().some((m) => m.includes('too old (405)') && m.includes('fetching the current version'))).to.equal(true);
    await clock.tickAsync(session.retryAt! - Date.now());
    await h.sockets.waitForSockets(count + 1);
    expect(h.sockets.last.options.version).to.deep.equal([2, 3000, 1000000009]);
    h.sockets.last.open();
    expect(h.transport.session().problem).to.equal(undefined);
    expect(h.notices.at(-1)).to.include({ kind: 'recover', key: 'whatsapp-client-too-old' });
  });

  it('405 through WA_WEBSOCKET_URL on the bundled version (a proxy of WhatsApp, at every start): looked up quietly, no notice; a 405 on the looked-up version is told', async () => {
    const fetches = serveRevisions(1000000007, 1000000008);
    const h = await setup({ env: { WA_WEBSOCKET_URL: 'ws://127.0.0.1:9/ws/chat' } });
    const bundled = DEFAULT_CONNECTION_CONFIG.version;
    expect(h.sockets.last.options.version).to.deep.equal(bundled);
    expect(fetches.callCount).to.equal(0);
    h.sockets.last.close(405, 'Connection Failure');
    expect(h.transport.session().problem).to.equal(undefined);
    expect(h.notices).to.deep.equal([]);
    expect(h.messages().some((m) => m.includes('refused the WhatsApp Web version bundled with Baileys (405)'))).to.equal(true);
    await clock.tickAsync(h.transport.session().retryAt! - Date.now());
    await h.sockets.waitForSockets(2);
    expect(h.sockets.last.options.version).to.deep.equal([2, 3000, 1000000007]);
    // The looked-up version refused too: that is news (WhatsApp moved on), said to the owners.
    h.sockets.last.close(405, 'Connection Failure');
    expect(h.transport.session().problem).to.equal('client-too-old');
    expect(h.notices.map((n) => `${n.kind}:${n.key}`)).to.deep.equal(['raise:whatsapp-client-too-old']);
  });

  it('a connection that opens and fails at once keeps backing off instead of looping every two seconds', async () => {
    const h = await setup();
    await link(h);
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const count = h.sockets.sockets.length;
      h.sockets.last.close(DisconnectReason.connectionClosed);
      delays.push(h.transport.session().retryAt! - Date.now());
      await clock.tickAsync(h.transport.session().retryAt! - Date.now());
      await h.sockets.waitForSockets(count + 1);
      h.sockets.last.open();
      await clock.tickAsync(1_000);
    }
    expect(delays).to.deep.equal([1500, 3000, 6000, 12000]);
    // A connection that stays up a minute starts the count over.
    await clock.tickAsync(60_000);
    h.sockets.last.close(DisconnectReason.connectionClosed);
    expect(h.transport.session().retryAt! - Date.now()).to.equal(1500);
  });

  it('515 restarts are immediate only a few times per window, then backed off', async () => {
    const h = await setup();
    await link(h); // one restart
    for (let i = 0; i < 2; i++) {
      const count = h.sockets.sockets.length;
      h.sockets.last.close(DisconnectReason.restartRequired);
      await h.sockets.waitForSockets(count + 1);
      h.sockets.last.open();
    }
    const count = h.sockets.sockets.length;
    h.sockets.last.close(DisconnectReason.restartRequired);
    await clock.tickAsync(0);
    expect(h.sockets.sockets).to.have.length(count);
    expect(h.transport.session().status).to.equal('offline');
    expect(h.transport.session().retryAt).to.be.a('number');
    expect(h.messages().some((m) => m.includes('restarts within 10 min'))).to.equal(true);
  });

  it('never makes more than maxPerWindow connection attempts per window, whatever the close code', async () => {
    const h = await setup({ transport: { backoff: { baseMs: 10, maxMs: 10, maxPerWindow: 4, windowMs: 60_000 } } });
    const started = Date.now();
    for (let i = 0; i < 3; i++) {
      const count = h.sockets.sockets.length;
      h.sockets.last.close(undefined);
      await clock.tickAsync(h.transport.session().retryAt! - Date.now());
      await h.sockets.waitForSockets(count + 1);
    }
    expect(h.sockets.sockets).to.have.length(4);
    h.sockets.last.close(undefined);
    // The fifth attempt waits until the first leaves the one-minute window.
    expect(h.transport.session().retryAt).to.equal(started + 60_000);
    expect(h.messages().some((m) => m.includes('4 connection attempts within 1 min'))).to.equal(true);
  });

  it('403 (banned/forbidden): stops reconnecting, shows the state and tells the owners', async () => {
    const h = await setup();
    await link(h);
    const count = h.sockets.sockets.length;
    h.sockets.last.close(DisconnectReason.forbidden);
    const session = h.transport.session();
    expect(session).to.include({ status: 'offline', problem: 'forbidden' });
    expect(session.lastError).to.include('forbidden (403)').and.to.include('not reconnecting');
    expect(session.retryAt).to.equal(undefined);
    await clock.tickAsync(2 * 60 * 60_000);
    expect(h.sockets.sockets).to.have.length(count);
    expect(h.notices).to.have.length(1);
    // Raised as the link being down: told over WhatsApp only once it carries messages again (late).
    expect(h.notices[0]).to.include({ kind: 'raise', key: 'whatsapp-forbidden', linkDown: true });
    expect(h.notices[0].text).to.include('banned');
    expect(h.logs().find((l) => String(l.msg).includes('403 forbidden'))?.level).to.equal(50);
  });

  it('500 (bad session): a distinct state and an owner notice, retried with backoff, recovered on open', async () => {
    const h = await setup();
    await link(h);
    const count = h.sockets.sockets.length;
    h.sockets.last.close(DisconnectReason.badSession);
    expect(h.transport.session()).to.include({ status: 'offline', problem: 'bad-session' });
    expect(h.notices.map((n) => `${n.kind}:${n.key}`)).to.deep.equal(['raise:whatsapp-bad-session']);
    await clock.tickAsync(h.transport.session().retryAt! - Date.now());
    await h.sockets.waitForSockets(count + 1);
    h.sockets.last.open();
    expect(h.notices.map((n) => `${n.kind}:${n.key}`)).to.deep.equal(['raise:whatsapp-bad-session', 'recover:whatsapp-bad-session']);
  });

  it('a session that stays open and answers keep-alives but delivers no messages is reconnected; message traffic keeps it', async () => {
    const h = await setup({ transport: { silentMs: 30 * 60_000 } });
    await link(h);
    const count = h.sockets.sockets.length;
    // Messages every 20 min for two hours, then receipts of sent messages (group and private) for two more.
    for (let i = 0; i < 12; i++) {
      await clock.tickAsync(20 * 60_000);
      if (i < 6) h.sockets.last.deliver([waText(`message ${i}`, { from: '6281211110000@s.whatsapp.net' })]);
      else if (i < 9) h.sockets.last.ev.emit('messages.update', [{ key: { remoteJid: '6281211110000@s.whatsapp.net', id: `BOT${i}`, fromMe: true }, update: { status: proto.WebMessageInfo.Status.DELIVERY_ACK } }]);
      else h.sockets.last.ev.emit('message-receipt.update', [{ key: { remoteJid: '120363000000000001@g.us', id: `BOT${i}`, fromMe: true }, receipt: { userJid: '98765432100001@lid', readTimestamp: Math.floor(Date.now() / 1000) } }]);
    }
    await h.transport.idle();
    expect(h.sockets.sockets).to.have.length(count);
    // Then only keep-alive answers (every 30 s, as Baileys gets them): deaf, though the connection looks alive.
    for (let i = 0; i < 59; i++) {
      await clock.tickAsync(30_000);
      h.sockets.last.frame();
    }
    expect(h.sockets.sockets[count - 1].ended).to.equal(false);
    await clock.tickAsync(31_000);
    expect(h.sockets.sockets[count - 1].ended).to.equal(true);
    expect(h.transport.session()).to.include({ problem: 'silent', status: 'offline' });
    expect(h.messages().some((m) => m.includes('a silent session') && m.includes('reconnecting'))).to.equal(true);
    await clock.tickAsync(h.transport.session().retryAt! - Date.now());
    await h.sockets.waitForSockets(count + 1);
    expect(h.sockets.alive()).to.deep.equal([h.sockets.last]);
  });

  it("the bot's own echoed sends do not count as traffic, and a quiet night is not cycled every half hour: each silent reconnect in a row doubles the wait", async () => {
    const h = await setup({ transport: { silentMs: 30 * 60_000 } });
    await link(h);
    const silentCloses = () => h.messages().filter((m) => m.includes('a silent session')).length;
    // The bot sends a reminder every 10 min: Baileys echoes each as a fromMe upsert, made locally, not received.
    h.sockets.last.echoOwnSends = true;
    for (let i = 0; i < 2; i++) {
      await clock.tickAsync(10 * 60_000);
      const echoed = h.sockets.last.sent.length + 1;
      void h.transport.sendText('6281211110000@s.whatsapp.net', `reminder ${i}`);
      await h.sockets.last.waitForSent(echoed);
    }
    await clock.tickAsync(10 * 60_000 + 1000);
    expect(silentCloses(), 'deaf although the bot kept sending').to.equal(1);
    // The reconnected session stays quiet (a personal bot at night): the next check waits 1 h, then 2 h.
    const reopen = async () => {
      const count = h.sockets.sockets.length;
      await clock.tickAsync(h.transport.session().retryAt! - Date.now());
      await h.sockets.waitForSockets(count + 1);
      h.sockets.last.open(BOT_ME);
    };
    await reopen();
    await clock.tickAsync(59 * 60_000);
    expect(silentCloses()).to.equal(1);
    await clock.tickAsync(61_000);
    expect(silentCloses()).to.equal(2);
    await reopen();
    await clock.tickAsync(119 * 60_000);
    expect(silentCloses()).to.equal(2);
    await clock.tickAsync(61_000);
    expect(silentCloses()).to.equal(3);
    // A message from someone: the session delivers, and the wait is 30 min again.
    await reopen();
    h.sockets.last.deliver([waText('good morning', { from: '6281211110000@s.whatsapp.net' })]);
    await clock.tickAsync(31 * 60_000);
    expect(silentCloses()).to.equal(4);
  });
});
