import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { proto } from '@whiskeysockets/baileys';
import { startTestBot, type BotAction, type ModelAnswer, type ModelRequest, type TestBot } from '../../../app/testing/index.js';
import { startFakeSocketBot, waMessage, type FakeSocketBot } from '../../../app/testing/whatsapp.js';
import { ConsoleTransport } from '../../../core/adapters/console/console-transport.js';
import { parseVcard } from '../../../core/adapters/whatsapp/shared-cards.js';
import type { IncomingMessage } from '../../../core/kernel/port/message.js';
import share from '../../../plugins/share/index.js';
import { UNPACED_ANSWERS } from '../../helpers/chat.js';

const ALICE = '62811111111@s.whatsapp.net';

const userTexts = (r: ModelRequest) => r.messages.filter((m) => m.role === 'user').map((m) => String(m.content));
const systemText = (r: ModelRequest) => r.messages.filter((m) => m.role === 'system').map((m) => String(m.content)).join('\n');

/** A model that calls `tool` once with `args`, then answers "done" after the tool's result. */
const calling = (tool: string, args: Record<string, unknown>) => (r: ModelRequest): ModelAnswer => (r.messages.at(-1)?.role === 'tool' ? `done: ${String(r.messages.at(-1)!.content)}` : { tool, args });

/** Locations and contact cards as data, both ways (issue 54). */
describe('locations and contact cards', function () {
  this.timeout(60_000);

  describe('on the memory transport', () => {
    let t: TestBot | undefined;
    afterEach(async () => {
      await t?.stop();
      t = undefined;
    });

    it('a shared location reaches the model as framed data: coordinates, name, address, a map link; never in the system prompt', async () => {
      t = await startTestBot(share);
      await t.send({ senderId: ALICE, location: { latitude: 48.8584, longitude: 2.2945, name: 'Eiffel Tower', address: 'Champ de Mars, Paris' } });
      const asked = t.model.requests.at(-1)!;
      const last = userTexts(asked).at(-1)!;
      expect(last).to.match(/^\[They shared a location, without a question of their own\.\]\n\[Content: a location the person shared, from someone else/);
      expect(last).to.contain('\nlocation\nlatitude: 48.8584\nlongitude: 2.2945\nname: Eiffel Tower\naddress: Champ de Mars, Paris\nmap: https://www.openstreetmap.org/?mlat=48.8584&mlon=2.2945\n');
      expect(systemText(asked)).to.not.contain('Eiffel');
    });

    it('a live location says it is live and which update it is', async () => {
      t = await startTestBot(share);
      await t.send({ senderId: ALICE, location: { latitude: -6.2, longitude: 106.8166, live: true, sequence: 3 } });
      expect(userTexts(t.model.requests.at(-1)!).at(-1)).to.contain('\nlive location (update 3)\nlatitude: -6.2\nlongitude: 106.8166\n');
    });

    it('a live location is answered once: its updates (further messages while the person moves) are not, within the hour', async () => {
      t = await startTestBot(share);
      const at = (sequence: number) => ({ senderId: ALICE, location: { latitude: -6.2 + sequence / 1000, longitude: 106.8166, live: true, sequence } });
      expect(await t.send(at(1)), 'the share itself is answered').to.have.length(1);
      const asked = t.model.requests.length;
      for (const sequence of [2, 3, 4]) expect(await t.send(at(sequence)), `update ${sequence} was answered`).to.deep.equal([]);
      expect(t.model.requests.length, 'an update reached the model').to.equal(asked);
      // Another person's live location in the same chat is theirs: answered.
      expect(await t.send({ ...at(5), senderId: '62811000077@s.whatsapp.net' })).to.have.length(1);
    });

    it('a contact card reaches the model with its name and every number, framed as content', async () => {
      t = await startTestBot(share);
      await t.send({ senderId: ALICE, contacts: [{ name: 'Ann Lee', numbers: ['+6281234567890', '+6221555000'] }] });
      const last = userTexts(t.model.requests.at(-1)!).at(-1)!;
      expect(last).to.match(/^\[They shared a contact card, without a question of their own\.\]\n\[Content: a contact card the person shared/);
      expect(last).to.contain('\ncontact card\nname: Ann Lee\nphone numbers: +6281234567890, +6221555000\n');
    });

    it('send_location sends a map pin into the chat that asked (never another), and the model is told it went', async () => {
      t = await startTestBot(share, { model: calling('send_location', { latitude: 51.5007, longitude: -0.1246, name: 'Big Ben', address: 'London' }) });
      const actions = await t.push({ senderId: ALICE, text: 'send me where Big Ben is' });
      const pins = actions.filter((a): a is Extract<BotAction, { type: 'location' }> => a.type === 'location');
      expect(pins).to.deep.equal([{ type: 'location', chatId: ALICE, id: pins[0].id, location: { latitude: 51.5007, longitude: -0.1246, name: 'Big Ben', address: 'London' } }]);
      expect(actions.filter((a) => a.type === 'text').map((a) => (a as { text: string }).text)).to.deep.equal(['done: Sent the location 51.5007, -0.1246 (Big Ben) to this chat. Do not repeat the coordinates unless asked.']);
    });

    it('send_contact sends a card with the number in international form; a number that is none sends nothing and says why', async () => {
      t = await startTestBot(share, { model: calling('send_contact', { name: 'Ann Lee', number: '+62 812-3456-7890' }) });
      const actions = await t.push({ senderId: ALICE, text: "send me Ann's contact" });
      expect(actions.filter((a) => a.type === 'contact').map((a) => (a as { contact: unknown }).contact)).to.deep.equal([{ name: 'Ann Lee', number: '+6281234567890' }]);
      await t.stop();
      t = await startTestBot(share, { model: calling('send_contact', { name: 'Ann', number: 'call me maybe' }) });
      const refused = await t.push({ senderId: ALICE, text: "send me Ann's contact" });
      expect(refused.some((a) => a.type === 'contact')).to.equal(false);
      expect((refused.find((a) => a.type === 'text') as { text: string }).text).to.contain('is not a phone number');
    });
  });

  describe('in the console', () => {
    async function consoleWith(onMessage: (m: IncomingMessage) => Promise<void>) {
      const input = new PassThrough();
      const output = new PassThrough();
      const errors = new PassThrough();
      let out = '';
      let err = '';
      output.on('data', (c: Buffer) => (out += c.toString()));
      errors.on('data', (c: Buffer) => (err += c.toString()));
      const console = new ConsoleTransport({ input, output, errors });
      await console.start(onMessage);
      return { console, input, out: () => out, err: () => err };
    }

    it(':location and :contact come in as shared data; the bot\'s location and card print as bot [location] and bot [contact]', async () => {
      const seen: IncomingMessage[] = [];
      const c = await consoleWith(async (m) => {
        seen.push(m);
        if (m.location) await c.console.sendLocation(m.chatId, { latitude: m.location.latitude, longitude: m.location.longitude, name: 'Back at you' });
        if (m.contacts) await c.console.sendContact(m.chatId, { name: m.contacts[0].name, number: m.contacts[0].numbers[0] });
      });
      c.input.end(':location 48.8584 2.2945 Eiffel Tower\n:location -6.2 106.8166\n:contact Ann Lee +6281234567890\n:location 91 0\n:contact Ann\n');
      await c.console.done;
      expect(seen.map((m) => [m.relayed, m.location ?? m.contacts, m.text])).to.deep.equal([
        ['location', { latitude: 48.8584, longitude: 2.2945, name: 'Eiffel Tower' }, '📍 Eiffel Tower (48.8584, 2.2945)'],
        ['location', { latitude: -6.2, longitude: 106.8166 }, '📍 -6.2, 106.8166'],
        ['contact card', [{ name: 'Ann Lee', numbers: ['+6281234567890'] }], '👤 Ann Lee +6281234567890'],
      ]);
      expect(c.out().split('\n').filter(Boolean)).to.deep.equal(['bot [location] 48.8584 2.2945 Back at you', 'bot [location] -6.2 106.8166 Back at you', 'bot [contact] Ann Lee +6281234567890']);
      expect(c.err()).to.contain(':location needs a latitude (-90 to 90)').and.contain(':contact needs a name and a phone number');
    });
  });

  describe('over WhatsApp (fake socket, real proto messages)', () => {
    // Each message its own turn, answered as soon as it is ready: bursts and WhatsApp's answer spacing are
    // bursts.test.ts's and answer-pacing.test.ts's, and would wait real seconds here.
    const unhurried = { answerPacing: UNPACED_ANSWERS, config: { conversation: { debounceMs: 0 } } };
    let bot: FakeSocketBot | undefined;
    afterEach(async () => {
      await bot?.stop();
      bot = undefined;
    });

    it('an inbound locationMessage and a contactMessage with a vCard reach the model as data', async () => {
      bot = await startFakeSocketBot(share, unhurried);
      await bot.deliver(waMessage(proto.Message.fromObject({ locationMessage: { degreesLatitude: 48.8584, degreesLongitude: 2.2945, name: 'Eiffel Tower', address: 'Champ de Mars' } })));
      expect(userTexts(bot.model.requests.at(-1)!).at(-1)).to.contain('\nlocation\nlatitude: 48.8584\nlongitude: 2.2945\nname: Eiffel Tower\naddress: Champ de Mars\n');
      await bot.deliver(waMessage(proto.Message.fromObject({ liveLocationMessage: { degreesLatitude: 1.25, degreesLongitude: 103.8, sequenceNumber: 7 } })));
      expect(userTexts(bot.model.requests.at(-1)!).at(-1)).to.contain('\nlive location (update 7)\nlatitude: 1.25\nlongitude: 103.8\n');
      const vcard = 'BEGIN:VCARD\nVERSION:3.0\nN:Lee;Ann;;;\nFN:Ann Lee\nTEL;type=CELL;type=VOICE;waid=6281234567890:+62 812-3456-7890\nitem1.TEL:+62 21 555 000\nEND:VCARD';
      await bot.deliver(waMessage(proto.Message.fromObject({ contactMessage: { displayName: 'Ann', vcard } })));
      expect(userTexts(bot.model.requests.at(-1)!).at(-1)).to.contain('\ncontact card\nname: Ann Lee\nphone numbers: +6281234567890, +6221555000\n');
    });

    it('send_location and send_contact go out as Baileys builds them: a locationMessage, a contactMessage whose vCard reads back', async () => {
      bot = await startFakeSocketBot(share, { ...unhurried, model: calling('send_location', { latitude: 51.5007, longitude: -0.1246, name: 'Big Ben' }) });
      const sent = await bot.deliver(waMessage(proto.Message.fromObject({ conversation: 'where is big ben?' })));
      const pin = sent.find((s) => s.message?.locationMessage)!;
      expect(pin.message!.locationMessage).to.deep.include({ degreesLatitude: 51.5007, degreesLongitude: -0.1246, name: 'Big Ben' });
      expect(pin.jid).to.equal('6281200000001@s.whatsapp.net');
      await bot.stop();
      bot = await startFakeSocketBot(share, { ...unhurried, model: calling('send_contact', { name: 'Ann Lee', number: '+6281234567890' }) });
      const cards = await bot.deliver(waMessage(proto.Message.fromObject({ conversation: "send me Ann's number" })));
      const card = cards.find((s) => s.message?.contactMessage)!.message!.contactMessage!;
      expect(card.displayName).to.equal('Ann Lee');
      expect(parseVcard(card.vcard!)).to.deep.equal({ name: 'Ann Lee', numbers: ['+6281234567890'] });
      expect(card.vcard).to.contain('waid=6281234567890');
    });
  });
});
