import type { PrivacyParticipant } from '../../core/index.js';
import { WorkspaceFiles } from './files.js';
import type { WorkspaceStore } from './store.js';

/** The workspace in the privacy controls: the person's workspace listing (export) and the whole workspace (delete). */
export function workspacePrivacy(store: () => WorkspaceStore): PrivacyParticipant {
  const find = (person: string[]) => {
    const s = store();
    const owner = s.findOwner(person[0], person[1]);
    return owner ? s.byOwner(owner) : undefined;
  };
  return {
    name: 'workspace',
    async exportFor(person) {
      const meta = find(person);
      if (!meta) return null;
      const files = await new WorkspaceFiles(store().dirOf(meta), { maxFileBytes: 0, quotaBytes: 0, maxFiles: 0 }).list();
      return { id: meta.id, username: meta.username ?? null, createdAt: new Date(meta.createdAt).toISOString(), ids: meta.ids, files };
    },
    // A private chat moving from its LID to its phone id stays in its open workspace.
    async moveChat(from, to) {
      await store().moveChat(from, to);
    },
    async deleteFor(person) {
      const meta = find(person);
      if (!meta) return 0;
      await store().remove(meta);
      return 1;
    },
  };
}
