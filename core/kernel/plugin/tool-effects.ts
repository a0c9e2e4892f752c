import type { EffectKind } from '../guard/policy.js';

/**
 * What a tool brings into a turn and what it acts on. The core reads it to keep two kinds of tool out of one turn: a
 * tool that reads or changes one person's own files (`acts: 'ownFiles'`) is never offered together with a tool that
 * brings in text someone else wrote (`outsideText`) or one that acts on chats (`acts: 'chats'`) — otherwise a planted
 * instruction in a past message or a web page could make the model delete the person's files or post them in a group.
 * When a turn holds an `ownFiles` tool, the others are left out of it (and the log says which).
 *
 * @example
 * effects: { outsideText: true, acts: 'nothing' } // web search: reads pages others wrote, changes nothing
 */
export interface ToolEffects {
  /**
   * The tool brings in text that neither the person asking nor the bot wrote: other people's past messages, voice-note
   * transcripts, web pages, another program's answers (every MCP tool).
   */
  outsideText: boolean;
  /**
   * What it acts on besides answering: `'nothing'` (looks something up); `'ownFiles'` (reads, writes, deletes, runs or
   * publishes one person's own files — reading counts, since what it reads can be posted where others see it);
   * `'chats'` (schedules or sends messages, reaches other chats, or changes what a chat keeps, such as its memory).
   */
  acts: 'nothing' | 'ownFiles' | 'chats';
  /**
   * The effect a call causes, for the core's effect guard (config.json `guard`): every call then asks it first —
   * allowed it runs, held it waits for the owner's 👍, denied the model is told why. E.g. `'deleteFiles'`, `'publish'`.
   */
  kind?: EffectKind;
}

/**
 * The effects of a tool that declares none: the unsafe side on both counts it can be mixed on — it may bring in
 * outside text and may act on chats — so it is never offered next to a tool that touches someone's own files. (A
 * tool touching files must say `acts: 'ownFiles'`: only then does the core keep outside text away from it.)
 */
export const UNDECLARED_EFFECTS: Readonly<ToolEffects> = Object.freeze({ outsideText: true, acts: 'chats' });
