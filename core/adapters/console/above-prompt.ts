import { Writable } from 'node:stream';

/** What the console transport lends while its prompt (`you> ` and what is typed so far) is on the screen. */
export interface PromptLine {
  /** True while the prompt is shown and waiting for typing (not while a line is being answered). */
  shown(): boolean;
  /** Wipes the prompt line, so text can be written where it was. */
  clear(): void;
  /** Draws the prompt again with what was typed so far, the cursor where it was. */
  redraw(): void;
}

/**
 * Warnings and errors of a terminal chat, written above the prompt: while `you> hel` is on the screen, the line is
 * wiped, the text written, and `you> hel` drawn again below it, so the typing goes on where it was. Before the console
 * has a prompt (start-up) and while a line is being answered, text is written as it comes.
 */
export class AbovePrompt extends Writable {
  private prompt: PromptLine | undefined;

  constructor(private readonly inner: NodeJS.WritableStream) {
    super();
  }

  /** A terminal behind it: the logger then writes readable, coloured lines (as it does straight to a terminal). */
  get isTTY(): boolean {
    return Boolean((this.inner as NodeJS.WriteStream).isTTY);
  }

  /** The console transport hands its prompt over once it shows one (and `undefined` when it stops). */
  attach(prompt: PromptLine | undefined): void {
    this.prompt = prompt;
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    const prompt = this.prompt?.shown() ? this.prompt : undefined;
    prompt?.clear();
    this.inner.write(chunk);
    prompt?.redraw();
    done();
  }
}
