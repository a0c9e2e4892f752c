import { expect } from 'chai';
import { storedHistory } from '../../helpers/disk-text.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import sinon from 'sinon';
import { createApp } from '../../../app/app.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { WhatsAppTransport } from '../../../core/adapters/whatsapp/whatsapp-transport.js';
import { whatsAppSettings } from '../../../app/whatsapp-settings.js';
import { BOT_ME, DisconnectReason, FakeSocketFactory, waText } from '../../fakes/baileys-socket.js';
import { completion, FakeGateway, lastUserText } from '../../fakes/openai-gateway.js';
import { tempDir, writeConfig } from '../../helpers/checkout.js';

describe('clean stop on WhatsApp (fake Baileys socket, real app)', () => {
  afterEach(() => sinon.restore());

  it('finishes the answer being made, takes no new message, saves history, closes the socket without logging out', async () => {
    const dir = await tempDir();
    // Each message its own turn at once: a burst's 1.5 s window (bursts.test.ts's) would wait in real time here.
    await writeConfig(dir, { conversation: { debounceMs: 0 } });
    let received!: () => void;
    let release!: () => void;
    const requestIn = new Promise<void>((resolve) => (received = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const gw = await FakeGateway.start('slow', () => async (req) => {
      received();
      await released;
      return { status: 200, json: completion(`slow: ${lastUserText(req)}`) };
    });
    // The log tells when a message was refused because the bot is stopping: the test waits for that line, not a time.
    const logSink = new PassThrough();
    let logged = '';
    const logWatchers = new Set<() => void>();
    logSink.on('data', (chunk: Buffer) => {
      logged += chunk.toString();
      for (const watch of [...logWatchers]) watch();
    });
    const untilLogged = (pattern: RegExp) =>
      new Promise<void>((resolve) => {
        const watch = () => pattern.test(logged) && (logWatchers.delete(watch), resolve());
        logWatchers.add(watch);
        watch();
      });
    const log = createLogger({ level: 'info', pretty: false, destination: logSink });
    const app = await createApp({ cwd: dir, env: { PATH: process.env.PATH ?? '', API_KEY: 'k-123456', BASE_URL: gw.url, MODEL: 'm' }, plugins: [], logger: log, skipHealthProbe: true });
    const sockets = new FakeSocketFactory();
    const transport = new WhatsAppTransport({
      ...whatsAppSettings(app.settings, () => app.config),
      log,
      makeSocket: sockets.make,
      printQr: () => undefined,
      random: () => 0.5,
      notices: app.notices,
      fetchVersion: async () => ({ version: [2, 3000, 1000000001], isLatest: true }),
    });
    try {
      await app.connect(transport);
      await sockets.waitForSockets(1);
      sockets.last.qr();
      sockets.last.paired({ id: BOT_ME.id, name: BOT_ME.name });
      sockets.last.close(DisconnectReason.restartRequired, 'Stream Errored (restart required)');
      await sockets.waitForSockets(2);
      const socket = sockets.last;
      socket.open(BOT_ME);

      const user = '6281200000001@s.whatsapp.net';
      socket.deliver([waText('what is the plan', { chat: user })]);
      await requestIn;
      const stopped = app.stop(); // stops taking messages at once (the drain starts before its first await)
      socket.deliver([waText('.ping', { chat: user })]);
      await untilLogged(/a message came in while the bot is stopping: not taken/);
      release();
      await stopped;

      const texts = socket.sent.map((s) => (s.content as { text?: string }).text).filter(Boolean);
      expect(texts).to.deep.equal(['slow: what is the plan']);
      expect(socket.ended, 'the socket is closed').to.equal(true);
      expect(sockets.alive()).to.have.length(0);
      // Not logged out: the session is still on disk for the next start.
      expect(existsSync(path.join(dir, 'data', 'session_auth', 'creds.json'))).to.equal(true);
      const saved = storedHistory(path.join(dir, 'data')).map((e) => e.text);
      expect(saved.join('\n')).to.include('what is the plan').and.include('slow: what is the plan').and.not.include('.ping');
    } finally {
      release();
      await gw.close();
    }
  });
});
