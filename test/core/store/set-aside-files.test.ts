import { expect } from 'chai';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../../../app/testing/index.js';

const LID = '98765432100001@lid';
const PHONE = '6281211110000@s.whatsapp.net';
const GROUP = '120363000000000007@g.us';
const BROKEN = '{"messages": [{"text": "my PIN is 4412", "role": "user"'; // cut short: not JSON

describe('files set aside as unreadable follow the chat: moved with it, in its person\'s export, deleted with them', () => {
  let t: TestBot | undefined;
  afterEach(async () => {
    await t?.stop();
    t = undefined;
  });

  const start = async () => (t = await startTestBot('bundled', { config: { access: { mode: 'everyone', allow: [], block: [] } } }));
  const inFolder = async (folder: string) => (await readdir(path.join(path.join(t!.dir, 'data'), folder)).catch(() => [] as string[])).sort();

  it('a private chat\'s history file set aside under its LID moves to the phone id with its bytes, nothing left under the LID', async () => {
    await start();
    await mkdir(path.join(path.join(t!.dir, 'data'), 'history'), { recursive: true });
    await writeFile(path.join(path.join(t!.dir, 'data'), 'history', `${LID}.json`), BROKEN);
    expect(await t!.app.bot.histories.recent(LID)).to.deep.equal([]); // read: set aside, started empty
    const [aside] = (await inFolder('history')).filter((n) => n.includes('.corrupt-'));
    expect(aside, 'the store set the file aside').to.match(new RegExp(`^${LID}\\.json\\.corrupt-`));

    await t!.app.bot.moveChat(LID, PHONE);
    const names = await inFolder('history');
    expect(names.filter((n) => n.startsWith(LID)), 'nothing under the LID').to.deep.equal([]);
    const moved = names.find((n) => n.startsWith(`${PHONE}.json.corrupt-`));
    expect(moved, names.join(', ')).to.be.a('string');
    expect(await readFile(path.join(path.join(t!.dir, 'data'), 'history', moved!), 'utf8')).to.equal(BROKEN);
  });

  /** Writes `text` at `relative` under the data folder, as a store that set it aside in an earlier run left it. */
  const put = async (relative: string, text: string) => {
    await mkdir(path.dirname(path.join(t!.dir, 'data', relative)), { recursive: true });
    await writeFile(path.join(t!.dir, 'data', relative), text);
  };
  const exported = async (person: string[]) => ((await t!.app.bot.privacy.exportFor(person))['files set aside as unreadable'] ?? []) as Array<{ file: string; text?: string }>;

  it('a person\'s export lists their private chat\'s files set aside in an earlier run; their delete removes them and leaves a group\'s and the workspaces\' files', async () => {
    await start();
    t = await t!.restart({}, async () => {
      await put(`history/${PHONE}.json.corrupt-1764000000000`, BROKEN);
      await put(`memory/${LID}.json.corrupt-1764000000001`, '{"facts": [');
      await put(`recall/${PHONE}/2026-11.jsonl.corrupt-1764000000002`, 'half a line');
      await put(`history/${GROUP}.json.corrupt-1764000000003`, 'a group\'s words');
      await put(`history/15550009999@s.whatsapp.net.json.corrupt-1764000000004`, 'someone else');
      await put(`workspaces/files/ws1/${PHONE}.json.corrupt-1764000000005`, 'a file a user made');
    });

    const files = await exported([PHONE, LID]);
    expect(files.map((f) => f.file).sort()).to.deep.equal(
      [`history/${PHONE}.json.corrupt-1764000000000`, `memory/${LID}.json.corrupt-1764000000001`, `recall/${PHONE}/2026-11.jsonl.corrupt-1764000000002`].map((f) => path.normalize(f)).sort(),
    );
    expect(files.find((f) => f.file.startsWith('history'))?.text).to.equal(BROKEN);

    const counts = await t!.app.bot.privacy.deleteFor([PHONE, LID]);
    expect(counts['files set aside as unreadable']).to.equal(3);
    expect(await inFolder('history')).to.deep.equal([`${GROUP}.json.corrupt-1764000000003`, '15550009999@s.whatsapp.net.json.corrupt-1764000000004'].sort());
    expect(await inFolder('memory')).to.deep.equal([]);
    expect(await inFolder(`recall/${PHONE}`)).to.deep.equal([]);
    expect(await inFolder('workspaces/files/ws1'), 'a user\'s own file is never taken for a set-aside one').to.deep.equal([`${PHONE}.json.corrupt-1764000000005`]);
    expect(await exported([PHONE, LID]), 'nothing left to export').to.deep.equal([]);
  });

  it('files set aside in an earlier run under a LID move with the chat to the phone id, and are exported and deleted there', async () => {
    await start();
    t = await t!.restart({}, async () => {
      await put(`memory/${LID}.json.corrupt-1764000000001`, '{"facts": [');
      await put(`recall/${LID}/2026-11.jsonl.corrupt-1764000000002`, 'half a line');
    });
    await t!.app.bot.moveChat(LID, PHONE);
    expect(await inFolder('memory')).to.deep.equal([`${PHONE}.json.corrupt-1764000000001`]);
    expect(await readFile(path.join(t!.dir, 'data', 'recall', PHONE, '2026-11.jsonl.corrupt-1764000000002'), 'utf8')).to.equal('half a line');
    expect(await inFolder(`recall/${LID}`)).to.deep.equal([]);

    // The phone id alone now finds them: the index follows the move.
    expect((await exported([PHONE])).map((f) => f.file).sort()).to.deep.equal([path.join('memory', `${PHONE}.json.corrupt-1764000000001`), path.join('recall', PHONE, '2026-11.jsonl.corrupt-1764000000002')]);
    expect((await t!.app.bot.privacy.deleteFor([PHONE]))['files set aside as unreadable']).to.equal(2);
    expect(await inFolder('memory')).to.deep.equal([]);
  });

  it('the index is searched, not data/: a file its store sets aside in this run is found at once; a file merely dropped in later waits for the next start', async () => {
    await start();
    await put(`memory/${PHONE}.json`, '{"facts": [');
    expect(await t!.app.bot.memories.facts(PHONE)).to.deep.equal([]); // read: set aside, started empty
    await put(`history/${PHONE}.json.corrupt-1764000000009`, 'copied in by hand');
    const now = (await exported([PHONE])).map((f) => f.file);
    expect(now).to.have.length(1);
    expect(now[0]?.startsWith(path.join('memory', `${PHONE}.json.corrupt-`)), now[0]).to.equal(true);

    t = await t!.restart();
    expect((await exported([PHONE])).map((f) => f.file).sort()).to.deep.equal([now[0], path.join('history', `${PHONE}.json.corrupt-1764000000009`)].sort());
  });
});
