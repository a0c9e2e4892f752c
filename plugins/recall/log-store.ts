import path from 'node:path';
import type { SearchHit } from '../../core/index.js';
import { domainFor, SqlSearchLog } from '../../core/builtin.js';
import { validEntry, type LoggedMessage } from './entry.js';

export { MAX_TEXT_CHARS, validEntry, type LoggedMessage } from './entry.js';
export { queryTerms } from '../../core/builtin.js';
export type RecallHit = SearchHit<LoggedMessage>;
export type ChatRecallLog = ReturnType<RecallStore['chat']>;

/**
 * The recall logs of a data folder, `root` being its `recall/` folder, opened on the same table of the store database
 * the plugin's `host.store` uses (`recall`'s `RECALL_LOG`): for tests and the benchmark that reach the log directly.
 */
export class RecallStore extends SqlSearchLog<LoggedMessage> {
  constructor(root: string, events: { badLines?(file: string, count: number): void } = {}) {
    const dataDir = path.dirname(root);
    super({ dataDir, namespace: 'recall', name: 'recall', folder: root, domain: domainFor(dataDir), title: 'recall log', item: validEntry, ...events });
  }
}
