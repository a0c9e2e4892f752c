import { expect } from 'chai';
import { DisconnectReason } from '../../fakes/baileys-socket.js';
import { fakeClockPerTest, link, setup } from './harness.js';

describe('WhatsApp transport: tells each change of its link as it happens (onSessionChange, fake socket)', () => {
  const clock = fakeClockPerTest();

  it('says qr, linked, connecting and offline with the status before, once each change, on no timer', async () => {
    const changes: string[] = [];
    const h = await setup({ events: { onSessionChange: (status, previous) => void changes.push(`${previous}→${status}`) } });
    await link(h);
    expect(changes).to.deep.equal(['offline→connecting', 'connecting→qr', 'qr→connecting', 'connecting→linked']);
    expect(h.transport.session().status).to.equal('linked');
    // A dropped connection is told at the close, before any retry is due (nothing is looked at on a timer).
    h.sockets.last.close(DisconnectReason.connectionClosed);
    expect(changes.at(-1)).to.equal(`linked→${h.transport.session().status}`);
    const told = changes.length;
    await clock.tickAsync(h.transport.session().retryAt! - Date.now());
    await h.sockets.waitForSockets(3);
    h.sockets.last.open();
    expect(changes.slice(told).at(-1)).to.equal('connecting→linked');
    // Every entry is a real change: never the same status twice in a row.
    expect(changes.every((c) => c.split('→')[0] !== c.split('→')[1])).to.equal(true);
  });
});
