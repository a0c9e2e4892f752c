import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Jail } from '../../core/index.js';
import { pinFormat } from '../../core/builtin.js';
import type { AudioProvider } from './audio-provider.js';
import { toVoiceNote } from './ffmpeg.js';
import { voiceNoteShape } from './waveform.js';

/** Links and code are read badly aloud and cannot be copied from a voice note: such answers go as text. */
const LINK = /\bhttps?:\/\/|\bwww\.\S|\b[a-z0-9-]+\.(?:com|org|net|io|dev|app|id|co)\b/i;
const CODE = /```|`[^`\n]+`/;

/**
 * Why an answer should go as text rather than as a voice note, or undefined when it may be spoken.
 *
 * @example whyText('see https://x.org', 600) // 'it contains a link'
 */
export function whyText(answer: string, maxChars: number): string | undefined {
  if (answer.length > maxChars) return `it is longer than ${maxChars} characters`;
  if (LINK.test(answer)) return 'it contains a link';
  if (CODE.test(answer)) return 'it contains code';
  return undefined;
}

/** Voice replies older than this are removed when the next one is made (the transport has long read them). */
const KEEP_MS = 10 * 60_000;

export interface SpeechMakerOptions {
  provider: AudioProvider;
  jail: Jail;
  /** The ffmpeg binary, or undefined when ffmpeg is not available. */
  ffmpeg: () => string | undefined;
  /** Where finished voice replies wait for the transport (`data/voice_replies/`). */
  dir: string;
  /**
   * How long each ffmpeg conversion in the jail may take (default 120 s). Not the upstream's HTTP timeout: a short
   * upstream timeout must not turn a busy machine's slow conversion into a text answer.
   */
  conversionTimeoutMs?: number;
}

/**
 * Turns an answer into a WhatsApp voice note: speech from the audio provider, its container pinned (core/media), then
 * converted to mono Ogg/Opus by ffmpeg in the jail. Any failure throws; the caller then sends the text.
 *
 * With it comes what a phone shows of a voice note before it plays: its length in seconds and its 64-bar waveform,
 * read from the same decode in the same jailed run (one ffmpeg per voice reply).
 *
 * @example const { file, seconds, waveform } = await maker.make('It is sunny today.', 'msg-1'); // data/voice_replies/…ogg
 */
export class SpeechMaker {
  constructor(private readonly options: SpeechMakerOptions) {}

  async make(text: string, name: string): Promise<{ file: string; seconds: number; waveform: Uint8Array }> {
    const binary = this.options.ffmpeg();
    if (!binary) throw new Error('ffmpeg is not available to make a voice note');
    const speech = await this.options.provider.speak(text);
    if (!speech.length) throw new Error('the speech endpoint answered with no audio');
    const format = await pinFormat(speech, 'sound');
    const { ogg, pcm } = await toVoiceNote(this.options.jail, binary, speech, { format, timeoutMs: this.options.conversionTimeoutMs });
    await mkdir(this.options.dir, { recursive: true });
    await this.removeOld();
    const file = path.join(this.options.dir, `${Date.now()}-${name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 60)}.ogg`);
    await writeFile(file, ogg);
    return { file, ...voiceNoteShape(pcm) };
  }

  private async removeOld(): Promise<void> {
    const now = Date.now();
    for (const name of await readdir(this.options.dir).catch(() => [] as string[])) {
      const file = path.join(this.options.dir, name);
      const info = await stat(file).catch(() => undefined);
      if (info && now - info.mtimeMs > KEEP_MS) await rm(file, { force: true }).catch(() => undefined);
    }
  }
}
