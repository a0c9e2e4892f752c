// What plugins see of the AI is declared next to the plugin types (core/kernel/plugin/types.ts), which need it for the
// context; this module only names it for the modules that import it from here (no cycle between the two).
export type { AiService, RespondOptions } from './types.js';
