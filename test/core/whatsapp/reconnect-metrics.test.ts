import { expect } from 'chai';
import parsePrometheus from 'parse-prometheus-text-format';
import { BotMetrics } from '../../../core/services/metrics/bot-metrics.js';
import { DisconnectReason } from '../../fakes/baileys-socket.js';
import { fakeClockPerTest, link, setup } from './harness.js';

/** wa_bot_reconnects_total by reason, from the Prometheus text. */
async function reconnects(metrics: BotMetrics): Promise<Record<string, number>> {
  const family = parsePrometheus(await metrics.registry.metrics()).find((f) => f.name === 'wa_bot_reconnects_total');
  return Object.fromEntries((family?.metrics ?? []).map((m) => [m.labels?.reason ?? '', Number(m.value)]));
}

describe('WhatsApp transport: reconnects in the metrics (fake socket)', () => {
  const clock = fakeClockPerTest();

  it('counts every close the transport comes back from by its reason, and not a 403 stop', async () => {
    const metrics = new BotMetrics();
    const h = await setup({ transport: { onReconnect: (reason) => metrics.reconnects.inc({ reason }) } });
    await link(h);
    h.sockets.last.close(DisconnectReason.connectionReplaced);
    await clock.tickAsync(h.transport.session().retryAt! - Date.now());
    h.sockets.last.close(undefined);
    await clock.tickAsync(h.transport.session().retryAt! - Date.now());
    h.sockets.last.close(undefined);
    await clock.tickAsync(h.transport.session().retryAt! - Date.now());
    h.sockets.last.close(DisconnectReason.forbidden);
    expect(await reconnects(metrics)).to.deep.equal({ 'restart required (515)': 1, 'connection replaced (440)': 1, 'network error': 2 });
  });
});
