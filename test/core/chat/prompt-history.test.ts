import { expect } from 'chai';
import path from 'node:path';
import { everyFileText } from '../../helpers/disk-text.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const ANA = '10000000001@s.whatsapp.net';
const BUDI = '10000000002@s.whatsapp.net';
const GROUP = '120363000000000031@g.us';

type Turn = { role: string; content: string };
/** Whether a chat request is a summary fold (started after an answer, never waited for), not an answer. */
const isFold = (messages: Turn[]) => messages.some((m) => m.role === 'system' && String(m.content).startsWith('You keep the running summary'));
/** The history turns (no system prompt) of the gateway's last answer request (a fold may have been sent after it). */
const lastPrompt = (gw: FakeGateway): Turn[] => ((gw.chats().map((c) => c.json!.messages as Turn[]).filter((m) => !isFold(m ?? [])).at(-1)) ?? []).filter((m) => m.role !== 'system' && !String(m.content).startsWith('[Content: summary of the earlier conversation'));

/**
 * The prompt's history is made from each chat's last prompt plus the entries added since (issue 24): what the model
 * sees must stay exactly the chat's history, after deletions, in groups and within the token budget.
 */
describe('the prompt history follows the chat history exactly', function () {
  this.timeout(20_000);
  let gw: FakeGateway;
  let t: TestBot;
  beforeEach(async () => {
    gw = await FakeGateway.start('gw');
  });
  afterEach(async () => {
    await t?.stop();
    await gw.close();
  });

  it("a message deleted for everyone leaves the next prompt with the bot's answer to it (it may repeat its words), the others stay in order", async () => {
    t = await startTestBot('bundled', { env: { API_KEY: 'k', BASE_URL: gw.url, MODEL: 'm' } });
    await t.transport.push({ id: 'a1', chatId: ANA, senderId: ANA, text: 'first apple' });
    await t.transport.push({ id: 'a2', chatId: ANA, senderId: ANA, text: 'second banana' });
    await t.transport.push({ id: 'a3', chatId: ANA, senderId: ANA, text: 'third cherry' });
    await t.transport.revoke(ANA, 'a2');
    await t.transport.push({ id: 'a4', chatId: ANA, senderId: ANA, text: 'fourth date' });
    expect(lastPrompt(gw)).to.deep.equal([
      { role: 'user', content: 'first apple' },
      { role: 'assistant', content: 'gw: first apple' },
      { role: 'user', content: 'third cherry' },
      { role: 'assistant', content: 'gw: third cherry' },
      { role: 'user', content: 'fourth date' },
    ]);
    // The oldest turn deleted: the window moves on without it.
    await t.transport.revoke(ANA, 'a1');
    await t.transport.push({ id: 'a5', chatId: ANA, senderId: ANA, text: 'fifth elder' });
    expect(lastPrompt(gw).map((m) => m.content)).to.deep.equal(['third cherry', 'gw: third cherry', 'fourth date', 'gw: fourth date', 'fifth elder']);
  });

  it("an edited message reaches the next prompt with its new text and without the bot's answer to the old text (it may repeat the old words); nothing of them stays on disk", async () => {
    t = await startTestBot('bundled', { env: { API_KEY: 'k', BASE_URL: gw.url, MODEL: 'm' } });
    await t.transport.push({ id: 'e1', chatId: ANA, senderId: ANA, text: 'first apple' });
    await t.transport.push({ id: 'e2', chatId: ANA, senderId: ANA, text: 'my door code is 90417' });
    // Another person's edit of Ana's message changes nothing.
    await t.transport.edit(ANA, 'e2', 'budi rewrote it', { ids: [BUDI] });
    await t.transport.edit(ANA, 'e2', 'my door code is private', { ids: [ANA] });
    await t.transport.push({ id: 'e3', chatId: ANA, senderId: ANA, text: 'third cherry' });
    expect(lastPrompt(gw)).to.deep.equal([
      { role: 'user', content: 'first apple' },
      { role: 'assistant', content: 'gw: first apple' },
      { role: 'user', content: 'my door code is private' },
      { role: 'user', content: 'third cherry' },
    ]);
    // The history and the recall log alike: the old words (the answer repeated them) are in no file of data/.
    await t.app.bot.histories.flush();
    const disk = await everyFileText(path.join(t.dir, 'data'), 'latin1');
    expect(disk).to.not.include('90417').and.not.include('budi rewrote');
    expect(disk).to.include('my door code is private');
  });

  it('the window slides over history.maxMessages, and each chat keeps its own turns', async () => {
    t = await startTestBot('bundled', { env: { API_KEY: 'k', BASE_URL: gw.url, MODEL: 'm' }, config: { history: { maxMessages: 4, maxPromptTokens: 3000, summarize: false } } });
    for (let i = 1; i <= 4; i++) {
      await t.transport.push({ chatId: ANA, senderId: ANA, text: `ana ${i}` });
      await t.transport.push({ chatId: BUDI, senderId: BUDI, text: `budi ${i}` });
    }
    expect(lastPrompt(gw).map((m) => m.content)).to.deep.equal(['gw: budi 2', 'budi 3', 'gw: budi 3', 'budi 4']);
    await t.transport.push({ chatId: ANA, senderId: ANA, text: 'ana 5' });
    expect(lastPrompt(gw).map((m) => m.content)).to.deep.equal(['gw: ana 3', 'ana 4', 'gw: ana 4', 'ana 5']);
  });

  it('in a group each user turn names its sender, context included; the token budget keeps the newest turns that fit', async () => {
    t = await startTestBot('bundled', { env: { API_KEY: 'k', BASE_URL: gw.url, MODEL: 'm' }, config: { targetUserIds: ['62899999999'] } });
    const ask = (senderId: string, senderName: string, text: string) =>
      t.transport.push({ chatId: GROUP, senderId, senderName, text: `@62899999999 ${text}`, mentions: ['62899999999@s.whatsapp.net'] });
    await ask(ANA, 'Ana', 'note the blue door');
    await t.transport.push({ chatId: GROUP, senderId: BUDI, senderName: 'Budi', text: 'lunch at 12?' });
    await ask(BUDI, 'Budi', 'and the red gate');
    expect(lastPrompt(gw)).to.deep.equal([
      { role: 'user', content: 'Ana: note the blue door' },
      { role: 'assistant', content: 'gw: Ana: note the blue door' },
      { role: 'user', content: 'Budi: lunch at 12?' },
      { role: 'user', content: 'Budi: and the red gate' },
    ]);

    // A budget of one token: only the newest turn goes (it always does).
    t.app.bot.setConfig({ ...t.app.config, history: { ...t.app.config.history, maxPromptTokens: 1 } });
    await ask(ANA, 'Ana', 'what colour was the door?');
    expect(lastPrompt(gw)).to.deep.equal([{ role: 'user', content: 'Ana: what colour was the door?' }]);
    // Room for the newest four turns (about 4 + 1 per 4 characters each) and no more.
    t.app.bot.setConfig({ ...t.app.config, history: { ...t.app.config.history, maxPromptTokens: 48 } });
    await ask(BUDI, 'Budi', 'thanks');
    expect(lastPrompt(gw).map((m) => m.content)).to.deep.equal(['gw: Budi: and the red gate', 'Ana: what colour was the door?', 'gw: Ana: what colour was the door?', 'Budi: thanks']);
  });
});
