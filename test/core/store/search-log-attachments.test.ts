import { expect } from 'chai';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Store, Type } from '../../../core/index.js';
import { safeFileName } from '../../../core/index.js';
import { PluginStores } from '../../../core/services/store/plugin-store.js';
import type { PrivacyParticipant } from '../../../core/kernel/port/privacy-participant.js';
import { everyFileText } from '../../helpers/disk-text.js';
import { storeFolderPerTest } from '../../helpers/store-folder.js';

/*
 * What a search log's declaration says beyond its lines, and the core does from it alone: files attached to an item
 * (`files`), other people's messages an item carries (`people.carried`) and the marker an erased item leaves
 * (`erased`). Through the API a plugin gets and the privacy participant the core makes; real files in a temporary
 * DATA_DIR, read back byte for byte.
 */

const ANA = '6281100000001@s.whatsapp.net';
const ANA_LID = '99000000000001@lid';
const BUDI = '6281100000002@s.whatsapp.net';
const CITRA = '6281100000003@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';
const DAY_MS = 24 * 60 * 60 * 1000;

const Around = Type.Object({ id: Type.String(), senderId: Type.String(), text: Type.String() });
const Clip = Type.Object({
  id: Type.String(),
  by: Type.String(),
  text: Type.String(),
  at: Type.Number(),
  file: Type.Optional(Type.String()),
  around: Type.Array(Around),
  gone: Type.Optional(Type.Literal(true)),
});
type ClipItem = { id: string; by: string; text: string; at: number; file?: string; around: Array<{ id: string; senderId: string; text: string }>; gone?: true };

const people = {
  author: (c: ClipItem) => c.by,
  messageId: (c: ClipItem) => c.id,
  carried: {
    messages: (c: ClipItem) => c.around,
    withMessages: (c: ClipItem, around: Array<{ text: string } | undefined>) => ({ ...c, around: c.around.flatMap((m, i) => (around[i] ? [{ ...m, text: around[i]!.text }] : [])) }),
  },
};
/** A log of clips with their audio, the messages around them, and no marker: an erased clip's line goes. */
const CLIPS = Store.chatSearchLog('clips', Clip, { files: (c) => (c.file ? [c.file] : []), people, keepDays: 30 });
/** The same with a marker: an erased clip keeps its id and time, nothing else. */
const MARKED = Store.chatSearchLog('marked', Clip, {
  files: (c) => (c.file ? [c.file] : []),
  people,
  erased: { marker: (c) => ({ id: c.id, by: '', text: '', at: c.at, around: [], gone: true as const }), is: (c) => c.gone === true },
});
/** A careless marker that keeps the author: the core refuses to keep it, and the line goes. */
const CARELESS = Store.chatSearchLog('careless', Clip, {
  files: (c) => (c.file ? [c.file] : []),
  people,
  erased: { marker: (c) => ({ ...c, text: '', file: undefined, gone: true as const }), is: (c) => c.gone === true },
});

const exists = (file: string) => stat(file).then(() => true, () => false);

describe('core store: files, carried messages and erased markers of a search log (Store.chatSearchLog)', function () {
  this.timeout(20_000);
  let stores: PluginStores;
  let privacy: PrivacyParticipant;
  const data = storeFolderPerTest({ prefix: 'search-log-files-', inside: 'data', closing: () => stores.close().catch(() => undefined) });
  const open = () => {
    stores = new PluginStores('tape', data.dir, [CLIPS, MARKED, CARELESS]);
    [privacy] = stores.participants();
  };
  const clips = (chatId: string) => stores.chat(chatId).searchLog(CLIPS);
  /** Adds a clip with its audio bytes written first, as a plugin does. */
  const record = async (decl: typeof CLIPS, chatId: string, clip: Omit<ClipItem, 'around'> & { around?: ClipItem['around'] }, audio?: string) => {
    const log = stores.chat(chatId).searchLog(decl);
    if (audio !== undefined) await log.putFile(clip.file!, Buffer.from(audio));
    await log.add({ around: [], ...clip });
  };

  beforeEach(() => {
    open();
  });

  it("a person's .mydata holds their items' files byte for byte; their delete removes those files and leaves others'", async () => {
    const now = Date.now();
    await record(CLIPS, GROUP, { id: 'a1', by: ANA, text: 'ana hums the anthem', at: now - 2, file: 'audio/a1.ogg' }, 'OGG-ANA-BYTES');
    await record(CLIPS, GROUP, { id: 'b1', by: BUDI, text: 'budi whistles', at: now - 1, file: 'audio/b1.ogg' }, 'OGG-BUDI-BYTES');
    const folder = stores.chat(GROUP).searchLog(CLIPS).folder;

    const exported = (await privacy.exportFor([ANA, ANA_LID])) as Record<string, Record<string, Array<ClipItem & { filesBase64?: Record<string, string> }>>>;
    const mine = exported.clips[GROUP];
    expect(mine.map((c) => c.id)).to.deep.equal(['a1']);
    expect(Buffer.from(mine[0].filesBase64!['audio/a1.ogg'], 'base64').toString()).to.equal('OGG-ANA-BYTES');

    expect(await privacy.deleteFor([ANA, ANA_LID])).to.equal(1);
    await stores.flush();
    expect(await exists(path.join(folder, 'audio/a1.ogg')), "the person's audio file is gone").to.equal(false);
    expect(await readFile(path.join(folder, 'audio/b1.ogg'), 'utf8'), "another person's audio stays").to.equal('OGG-BUDI-BYTES');
    expect(await everyFileText(data.dir, 'latin1')).not.to.include('OGG-ANA-BYTES');
  });

  it('a message deleted for everyone takes its item\'s file; a member cannot delete another\'s', async () => {
    const now = Date.now();
    await record(CLIPS, GROUP, { id: 'b1', by: BUDI, text: 'budi sings', at: now, file: 'audio/b1.ogg' }, 'OGG-BUDI');
    const file = clips(GROUP).filePath('audio/b1.ogg');
    expect(await privacy.revoke!(GROUP, 'b1', [ANA])).to.equal(0);
    expect(await exists(file)).to.equal(true);
    expect(await privacy.revoke!(GROUP, 'b1', [BUDI])).to.equal(1);
    expect(await exists(file)).to.equal(false);
    expect(await clips(GROUP).size()).to.equal(0);
  });

  it('retention drops an old item together with its file', async () => {
    const old = Date.now() - 40 * DAY_MS;
    await record(CLIPS, GROUP, { id: 'o1', by: BUDI, text: 'an old tune', at: old, file: 'audio/o1.ogg' }, 'OLD-BYTES');
    await record(CLIPS, GROUP, { id: 'n1', by: BUDI, text: 'a new tune', at: Date.now(), file: 'audio/n1.ogg' }, 'NEW-BYTES');
    await stores.flush();
    await stores.close();
    open();
    await stores.tune(CLIPS, { keepDays: () => 30 });
    const folder = clips(GROUP).folder;
    expect(await exists(path.join(folder, 'audio/o1.ogg'))).to.equal(false);
    expect(await readFile(path.join(folder, 'audio/n1.ogg'), 'utf8')).to.equal('NEW-BYTES');
  });

  it('files move with a chat from its LID to its phone id; a file both hold with other bytes is kept beside, not lost', async () => {
    const now = Date.now();
    await record(CLIPS, ANA_LID, { id: 'l1', by: ANA_LID, text: 'lid tune', at: now - 5, file: 'audio/l1.ogg' }, 'LID-ONE');
    await record(CLIPS, ANA_LID, { id: 'same', by: ANA_LID, text: 'clash tune', at: now - 4, file: 'audio/same.ogg' }, 'LID-CLASH');
    await record(CLIPS, ANA, { id: 'same', by: ANA, text: 'phone clash tune', at: now - 3, file: 'audio/same.ogg' }, 'PHONE-CLASH');
    await stores.flush();
    await privacy.moveChat!(ANA_LID, ANA);
    const folder = clips(ANA).folder;
    expect(await readFile(path.join(folder, 'audio/l1.ogg'), 'utf8')).to.equal('LID-ONE');
    expect(await readFile(path.join(folder, 'audio/same.ogg'), 'utf8')).to.equal('PHONE-CLASH');
    const beside = (await readdir(path.join(folder, 'audio'))).filter((n) => n.startsWith('same.ogg.moved-'));
    expect(beside).to.have.length(1);
    expect(await readFile(path.join(folder, 'audio', beside[0]), 'utf8')).to.equal('LID-CLASH');
    expect(await exists(path.join(data.dir, 'tape', 'clips', safeFileName(ANA_LID))), 'nothing stays under the old id').to.equal(false);
    expect((await clips(ANA).search('tune', { limit: 10 })).map((h) => h.message.id).sort()).to.deep.equal(['l1', 'same', 'same']);
  });

  it('a path that leaves the chat folder is refused when written and never deleted when a crafted line names it', async () => {
    await mkdir(data.dir, { recursive: true });
    const victim = path.join(data.dir, 'victim.txt');
    await writeFile(victim, 'keep me');
    expect(() => clips(GROUP).filePath('../../../victim.txt')).to.throw(/not a file path inside a chat's folder/);
    await clips(GROUP).putFile('../victim.txt', Buffer.from('x')).then(
      () => expect.fail('putFile outside the folder must be refused'),
      (err: Error) => expect(err.message).to.match(/not a file path inside a chat's folder/),
    );
    // A line on disk is not trusted: one naming the victim through "..", added by hand, is removed without touching it.
    await clips(GROUP).add({ id: 'x1', by: BUDI, text: 'crafted', at: Date.now(), file: 'audio/../../../../victim.txt', around: [] });
    await clips(GROUP).add({ id: 'x2', by: BUDI, text: 'crafted too', at: Date.now(), file: '../../../victim.txt', around: [] });
    expect(await privacy.deleteFor([BUDI])).to.equal(2);
    expect(await readFile(victim, 'utf8')).to.equal('keep me');
  });

  it("a person's messages carried inside other people's items go with their delete, their delete for everyone, and change with their edit", async () => {
    const now = Date.now();
    const around = [
      { id: 'm-ana', senderId: ANA, text: 'ana whispers the pin 4455' },
      { id: 'm-citra', senderId: CITRA, text: 'citra says hello' },
      { id: 'm-ana2', senderId: ANA, text: 'ana adds the street name' },
    ];
    await record(CLIPS, GROUP, { id: 'b1', by: BUDI, text: 'budi answers', at: now, around });
    expect(await privacy.edit!(GROUP, 'm-citra', 'citra says goodbye', [ANA]), 'only its writer edits it').to.equal(0);
    expect(await privacy.edit!(GROUP, 'm-citra', 'citra says goodbye', [CITRA])).to.equal(1);
    expect(await privacy.revoke!(GROUP, 'm-ana2', [CITRA]), 'only its writer deletes it').to.equal(0);
    expect(await privacy.revoke!(GROUP, 'm-ana2', [ANA])).to.equal(1);
    let [item] = await clips(GROUP).where(() => true);
    expect(item.around.map((m) => m.text)).to.deep.equal(['ana whispers the pin 4455', 'citra says goodbye']);
    await privacy.deleteFor([ANA, ANA_LID]);
    await stores.flush();
    [item] = await clips(GROUP).where(() => true);
    expect(item.text, "the item itself is Budi's and stays").to.equal('budi answers');
    expect(item.around.map((m) => m.text)).to.deep.equal(['citra says goodbye']);
    const disk = await everyFileText(data.dir, 'latin1');
    expect(disk).not.to.include('4455');
    expect(disk).not.to.include('street name');
    expect(disk).not.to.include('citra says hello');
  });

  it('with `erased`, a taken item leaves a marker: no words, author or file anywhere, never exported nor searched, not counted twice', async () => {
    const now = Date.now();
    const marked = () => stores.chat(GROUP).searchLog(MARKED);
    await record(MARKED, GROUP, { id: 'a1', by: ANA, text: 'ana reads the passphrase', at: now - 1, file: 'audio/a1.ogg' }, 'ANA-AUDIO');
    await record(MARKED, GROUP, { id: 'b1', by: BUDI, text: 'budi reads the passphrase', at: now, file: 'audio/b1.ogg' }, 'BUDI-AUDIO');
    expect(await privacy.deleteFor([ANA])).to.equal(1);
    expect(await privacy.revoke!(GROUP, 'b1', [BUDI])).to.equal(1);
    expect(await privacy.deleteFor([ANA]), 'a marker is not taken again').to.equal(0);
    await stores.flush();
    const markers = await marked().where(() => true);
    expect(markers.map((m) => ({ id: m.id, gone: m.gone, by: m.by, text: m.text, file: m.file }))).to.deep.equal([
      { id: 'a1', gone: true, by: '', text: '', file: undefined },
      { id: 'b1', gone: true, by: '', text: '', file: undefined },
    ]);
    expect(await marked().search('passphrase')).to.deep.equal([]);
    const disk = await everyFileText(data.dir, 'latin1');
    for (const gone of ['passphrase', 'ANA-AUDIO', 'BUDI-AUDIO', ANA, BUDI]) expect(disk).not.to.include(gone);
    // A restart reads the markers back (an item without words is kept for this declaration).
    await stores.close();
    open();
    expect((await stores.chat(GROUP).searchLog(MARKED).where(() => true)).map((m) => m.id)).to.deep.equal(['a1', 'b1']);
    // In the person's own private chat every item is theirs, markers are not.
    await record(MARKED, ANA, { id: 'p1', by: ANA, text: 'private', at: now }, undefined);
    await stores.chat(ANA).searchLog(MARKED).changeWhere(() => true, (c) => ({ ...c, text: '', by: '', gone: true }));
    const exported = (await privacy.exportFor([ANA])) as Record<string, Record<string, unknown[]>>;
    expect(exported.marked).to.deep.equal({});
  });

  it('a marker that still names its author is not kept: the line goes', async () => {
    const careless = () => stores.chat(GROUP).searchLog(CARELESS);
    await record(CARELESS, GROUP, { id: 'a1', by: ANA, text: 'ana says the code', at: Date.now(), file: 'audio/a1.ogg' }, 'ANA-AUDIO');
    expect(await privacy.deleteFor([ANA])).to.equal(1);
    await stores.flush();
    expect(await careless().size()).to.equal(0);
    const disk = await everyFileText(data.dir, 'latin1');
    expect(disk).not.to.include(ANA);
    expect(disk).not.to.include('ANA-AUDIO');
  });
});
