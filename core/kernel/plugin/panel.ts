import type { Awaitable } from './awaitable.js';

/** See `PluginOffer.panel`. */
export interface PluginPanel {
  read(): Awaitable<PanelTable[]>;
  actions?: PanelAction[];
}

/** One table of a plugin's dashboard panel: plain text cells (escaped when shown). */
export interface PanelTable {
  caption: string;
  columns: string[];
  rows: string[][];
  /** Shown instead of an empty table. */
  empty?: string;
}

/** One action of a plugin's dashboard panel: a button with one text field; `run` answers the sentence shown after it. */
export interface PanelAction {
  /** Its id in the form (letters, digits, `-`). */
  name: string;
  /** The button's words ("Watch"). */
  label: string;
  /** What the text field asks for ("chat name or number"). */
  field: string;
  run(value: string): Awaitable<string>;
}
