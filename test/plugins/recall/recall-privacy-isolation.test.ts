import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { type BotAction, FakeModel, startTestBot, type TestBot } from '../../../app/testing/index.js';
import mydata from '../../../plugins/mydata/index.js';
import recall from '../../../plugins/recall/index.js';
import { MemoryTransport } from '../../../core/adapters/memory/memory-transport.js';
import type { OutgoingMedia, SentMessage } from '../../../core/kernel/port/message.js';

const ANA = '10000000001@s.whatsapp.net';
const BUDI = '10000000002@s.whatsapp.net';

/** A memory transport that keeps the content of documents the bot sends (the bot removes the file after sending). */
class KeepingTransport extends MemoryTransport {
  documents: string[] = [];
  override async sendMedia(chatId: string, media: OutgoingMedia): Promise<SentMessage> {
    this.documents.push(await readFile(media.path, 'utf8'));
    return super.sendMedia(chatId, media);
  }
}

describe("recall privacy: one person's .mydata never reaches another person's private chat", function () {
  this.timeout(20_000);
  let model: FakeModel;
  let t: TestBot | undefined;
  let transport: KeepingTransport;
  const say = async (senderId: string, text: string) =>
    (await transport.push({ senderId, text })).filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text').map((a) => a.text);

  beforeEach(async () => {
    model = await FakeModel.start(() => 'noted about the orchard');
    t = await startTestBot([mydata, recall], { model });
    transport = new KeepingTransport();
    await t.app.connect(transport);
    await say(ANA, 'my orchard has seven apple trees');
    await say(BUDI, 'my orchard password is plum2024');
  });
  afterEach(async () => {
    await t?.stop();
    await model.close();
  });

  it("Ana's export holds her private chat only, not Budi's (nor the bot's answers to him)", async () => {
    await say(ANA, '.mydata');
    assert.equal(transport.documents.length, 1);
    const section = JSON.parse(transport.documents[0])['recall log'] as Record<string, Array<{ text: string }>>;
    assert.deepEqual(Object.keys(section), [ANA]);
    assert.doesNotMatch(transport.documents[0], /plum2024/);
  });

  it("Ana's delete leaves Budi's private chat whole", async () => {
    await say(ANA, '.mydata delete');
    assert.match((await say(ANA, '.mydata delete confirm'))[0], /recall log: 2\b/);
    assert.match((await say(ANA, '.recall orchard'))[0], /^Nothing in this chat/);
    const budi = (await say(BUDI, '.recall orchard'))[0];
    assert.match(budi, /^🔎 2 messages/);
    assert.match(budi, /plum2024/);
  });
});
