import type { PrivacyParticipant } from '../../core/index.js';
import { WorkspaceFiles } from './files.js';
import type { WorkspaceStore } from './store.js';

/**
 * What the store declarations (schemas.ts) cannot say, in the privacy controls: a person's workspace is theirs as a
 * whole — its files (not documents), its index file (named by the workspace id, not a chat) and its site username —
 * so it is listed in `.mydata` and deleted entirely; and a private chat moving from its LID to its phone id stays in
 * the workspaces open there. Their ids in users.json follow from its declaration.
 */
export function workspacePrivacy(store: () => WorkspaceStore): PrivacyParticipant {
  return {
    name: 'workspace',
    async exportFor(person) {
      const meta = store().ofPerson(person);
      if (!meta) return null;
      const files = await new WorkspaceFiles(store().dirOf(meta), { maxFileBytes: 0, quotaBytes: 0, maxFiles: 0 }).list();
      return { id: meta.id, username: meta.username ?? null, createdAt: new Date(meta.createdAt).toISOString(), ids: meta.ids, files };
    },
    async moveChat(from, to) {
      await store().moveChat(from, to);
    },
    async deleteFor(person) {
      const meta = store().ofPerson(person);
      if (!meta) return 0;
      await store().remove(meta);
      return 1;
    },
  };
}
