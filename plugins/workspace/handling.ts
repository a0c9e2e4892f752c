/*
 * What handling needs (the /ws commands, an open workspace's messages and tools, python runs, the reset effect):
 * index.ts loads it with the first of them, not at start, so a start compiles none of it.
 */
export { handleCommand, handleWorkspaceChat, resetWorkspace } from './commands.js';
export { WorkspaceService } from './service.js';
