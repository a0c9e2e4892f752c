import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import workspacePlugin from '../../../plugins/workspace/index.js';
import { startTestBot } from '../../../app/testing/index.js';
import { tempDir } from '../../helpers/checkout.js';
import { storedDocuments } from '../../helpers/disk-text.js';
import { putFile, texts, USER, USER_LID, workspaceDir } from './helpers.js';

const OTHER = '62899990000@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';

describe('workspace identity (phone id ↔ LID)', function () {
  this.timeout(30_000);

  it('finds the same workspace whether the person writes under the phone id or the LID, across restarts', async () => {
    const dir = await tempDir();
    let t = await startTestBot(workspacePlugin, { dir });
    try {
      await t.transport.push({ text: '/ws', senderId: USER });
      await putFile(await workspaceDir(t), 'mine.py', 'print(1)');
      // Same person, now seen by LID with the phone id as the alternative: same workspace, and the link is learnt.
      const viaLid = texts(await t.transport.push({ text: '/ws files', senderId: USER_LID, senderAltId: USER, chatId: USER }));
      expect(viaLid[0]).to.include('mine.py');
    } finally {
      await t.stop();
    }
    const users = storedDocuments(path.join(dir, 'data'), 'workspace', 'users')[''] as { owners: Record<string, string> };
    expect(users.owners[USER_LID]).to.equal(users.owners[USER]);

    t = await startTestBot(workspacePlugin, { dir });
    try {
      // LID only, no alternative id: still recognised from users.json.
      const lidOnly = texts(await t.transport.push({ text: '/ws files', senderId: USER_LID }));
      expect(lidOnly[0]).to.include('mine.py');
      // A device suffix does not make a new person.
      expect(texts(await t.transport.push({ text: '/ws files', senderId: '62811112222:12@s.whatsapp.net' }))[0]).to.include('mine.py');
      // Somebody else gets their own, empty workspace.
      const other = texts(await t.transport.push({ text: '/ws', senderId: '62899998888@s.whatsapp.net' }));
      expect(other[0]).to.include('new workspace').and.include('No files yet');
    } finally {
      await t.stop();
    }
  });

  it('links a LID-first workspace when the phone id shows up with it', async () => {
    const t = await startTestBot(workspacePlugin);
    try {
      await t.transport.push({ text: '/ws', senderId: USER_LID });
      await putFile(await workspaceDir(t, USER_LID), 'lidfile.py', 'print(2)');
      const both = texts(await t.transport.push({ text: '/ws files', senderId: USER, senderAltId: USER_LID }));
      expect(both[0]).to.include('lidfile.py');
      expect(texts(await t.transport.push({ text: '/ws files', senderId: USER }))[0]).to.include('lidfile.py');
    } finally {
      await t.stop();
    }
  });

  it('a private chat moving from its LID to its phone id stays in its open workspace; the LID holds none open; nobody else\'s changes', async () => {
    const dir = await tempDir();
    let t = await startTestBot(workspacePlugin, { dir, model: (r) => (r.tools.includes('workspace_run_python') ? 'with workspace tools' : 'plain') });
    // The workspaces' index, as the store database keeps it.
    const metas = async () => Object.values(storedDocuments(path.join(dir, 'data'), 'workspace', 'index')) as any[];
    const openChats = async (owner = USER_LID) => Object.keys((await metas()).find((m) => m.owner === owner).open);
    // Free text in a chat where the sender's workspace is open goes to the model with the workspace's tools.
    const inWorkspace = async (chatId: string, senderId = USER) =>
      texts(await t.transport.push({ text: 'make me a script', senderId, senderAltId: senderId === USER ? USER_LID : undefined, chatId })).includes('with workspace tools');
    try {
      await t.transport.push({ text: '/ws', senderId: USER_LID });
      // Somebody else's workspace, open in their own chat and in a group.
      await t.transport.push({ text: '/ws', senderId: OTHER });
      await t.transport.push({ text: '/ws', senderId: OTHER, chatId: GROUP });
      const othersBefore = (await metas()).find((m) => m.owner === OTHER);
      expect(await openChats()).to.deep.equal([USER_LID]);
      expect(await inWorkspace(USER)).to.equal(false);
      await t.app.bot.privacy.moveChat(USER_LID, USER);
      expect(await openChats()).to.deep.equal([USER]);
      expect(await inWorkspace(USER)).to.equal(true);
      expect(await inWorkspace(USER_LID, USER_LID)).to.equal(false);
      expect((await metas()).find((m) => m.owner === OTHER)).to.deep.equal(othersBefore);
      expect(await inWorkspace(OTHER, OTHER)).to.equal(true);
    } finally {
      await t.stop();
    }
    // After a restart the phone chat is still the one open in the workspace.
    t = await startTestBot(workspacePlugin, { dir });
    try {
      expect(await openChats()).to.deep.equal([USER]);
    } finally {
      await t.stop();
    }
  });
});
