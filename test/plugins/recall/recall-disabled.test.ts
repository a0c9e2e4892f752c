import assert from 'node:assert/strict';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { type BotAction, FakeModel, startTestBot, type TestBot } from '../../../app/testing/index.js';
import recall from '../../../plugins/recall/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { storedSearchLogText } from '../../helpers/disk-text.js';

const ANA = '10000000001@s.whatsapp.net';

/** Every chat's recall log under the data folder of `root` (data/recall), as text ('' when there is none). */
async function allText(root: string): Promise<string> {
  return storedSearchLogText(path.dirname(root), 'recall', 'recall');
}

describe('recall turned off by the owner', function () {
  this.timeout(20_000);
  let model: FakeModel;
  let dir: string;
  let t: TestBot | undefined;
  const start = (enabled: boolean) =>
    startTestBot(recall, { dir, model, config: { plugins: { recall: { enabled } } } });
  const say = async (text: string) =>
    (await t!.transport.push({ senderId: ANA, text })).filter((a): a is Extract<BotAction, { type: 'text' }> => a.type === 'text').map((a) => a.text);

  beforeEach(async () => {
    model = await FakeModel.start(() => 'the answer mentions the lighthouse');
    dir = await tempDir('recall-disabled-');
  });
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await model.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps nothing of the conversation while it is off (neither what people say nor what the bot answers)', async () => {
    t = await start(false);
    assert.deepEqual(await say('my passport number is K4471'), ['the answer mentions the lighthouse']);
    await t.stop();
    assert.doesNotMatch(await allText(path.join(dir, 'data', 'recall')), /K4471|lighthouse/);

    t = await start(true);
    await say('the visa expires in march');
    assert.match((await say('.recall visa'))[0], /^🔎 1 message[\s\S]*the visa expires in march/);
    assert.match((await say('.recall K4471'))[0], /^Nothing in this chat/);
    assert.match((await say('.recall lighthouse'))[0], /^🔎 1 message[\s\S]*me \(the bot\): the answer mentions the lighthouse[\s\S]*↑ .*the visa expires/);
  });
});
