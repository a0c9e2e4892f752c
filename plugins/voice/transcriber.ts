import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Jail } from '../../core/index.js';
import { MediaRefused } from '../../core/media.js';
import { ALLOWED_CONTAINERS, pinFormat, type PinnedFormat } from '../../core/builtin.js';
import { mediaSeconds } from '../../core/builtin.js';
import { sniffAudio, type AudioFormat } from './audio-format.js';
import { NoTranscriptError, type AudioProvider, type UploadFile } from './audio-provider.js';
import { AudioConversionError, SPEECH_BITRATE, toOpusSpeech } from './ffmpeg.js';
import { opusSeconds } from './opus-length.js';
import { KeysExhaustedError, ProviderDownError, RequestRejectedError } from '../../core/index.js';

/** A voice-note failure whose message is a complete sentence for the user. */
export class VoiceError extends Error {}

/** A finished transcription: the text and the audio as it is kept in the archive. */
export interface Transcript {
  text: string;
  audio: Buffer;
  format: AudioFormat;
  /** How many uploads it took (more than one when the file was split). */
  parts: number;
}

export interface TranscriberOptions {
  provider: AudioProvider;
  /** The provider's upload limit in bytes (read per file: the option is live). */
  maxUploadBytes: () => number;
  /** The ffmpeg binary, or undefined when ffmpeg is not available. */
  ffmpeg: () => string | undefined;
  /** Where ffmpeg runs (the core jail). */
  jail: Jail;
}

const MB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/**
 * Turns received audio into text: checks it, passes formats the provider reads through as they are (voice notes as
 * `.ogg`), converts others with ffmpeg, and shrinks or splits files over the provider's size limit. Every failure
 * becomes a VoiceError with a clear sentence.
 *
 * @example
 * const { format, seconds } = await transcriber.measure(bytes, 'voice');
 * const { text } = await transcriber.transcribe(bytes, 'voice', format);
 */
export class Transcriber {
  constructor(private readonly options: TranscriberOptions) {}

  private ffmpegOrFail(why: string): string {
    const binary = this.options.ffmpeg();
    if (!binary) throw new VoiceError(`${why}, and ffmpeg is not available to convert it.`);
    return binary;
  }

  /**
   * Pins the container from the first bytes (anything off the allow-list, such as an HLS playlist, is refused here,
   * before ffmpeg or the provider sees it) and measures how long it plays: an Ogg/Opus voice note from its pages
   * (opus-length.ts), anything else with ffprobe in the jail on that pinned format.
   */
  async measure(bytes: Buffer, kind: string): Promise<{ format: PinnedFormat; seconds: number }> {
    const what = kind === 'voice' ? 'voice note' : 'audio file';
    if (!bytes.length) throw new VoiceError(`That ${what} is empty (0 bytes), so there is nothing to transcribe.`);
    let format: PinnedFormat;
    try {
      format = await pinFormat(bytes, 'sound');
    } catch (err) {
      if (err instanceof MediaRefused) {
        throw new VoiceError(`I could not read that audio file: it is not in a format I open (${ALLOWED_CONTAINERS.sound.join(', ')}), so I did not listen to it. Please send a normal voice note or audio file.`);
      }
      throw err;
    }
    const binary = this.ffmpegOrFail(`I have to check how long that ${what} is before I send it anywhere`);
    // A voice note (one Opus stream in Ogg) is measured from its pages here, as ffprobe would: no process per note.
    const fromPages = format.demuxer === 'ogg' ? opusSeconds(bytes) : undefined;
    if (fromPages !== undefined) return { format, seconds: fromPages };
    const dir = await mkdtemp(path.join(os.tmpdir(), 'voice-probe-'));
    try {
      const file = path.join(dir, 'input');
      await writeFile(file, bytes);
      const seconds = await mediaSeconds(this.options.jail, binary, file, format);
      if (seconds === undefined) throw new VoiceError(`I could not read how long that ${what} is: it seems damaged or is not audio in a format I know.`);
      return { format, seconds };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  private async convert(bytes: Buffer, format: PinnedFormat, segmentSeconds?: number): Promise<Buffer[]> {
    const binary = this.ffmpegOrFail('I would have to convert that audio first');
    try {
      return await toOpusSpeech(this.options.jail, binary, bytes, { format, segmentSeconds });
    } catch (err) {
      if (err instanceof AudioConversionError) throw new VoiceError('I could not read that audio file: it seems damaged or is not audio in a format I know.');
      throw err;
    }
  }

  /** Transcribes audio bytes of a voice note or audio file, whose container `measure` pinned. */
  async transcribe(bytes: Buffer, kind: string, pinned: PinnedFormat): Promise<Transcript> {
    const what = kind === 'voice' ? 'voice note' : 'audio file';
    if (!bytes.length) throw new VoiceError(`That ${what} is empty (0 bytes), so there is nothing to transcribe.`);
    let format = sniffAudio(bytes);
    let audio = bytes;
    let audioFormat = pinned;
    if (!format) {
      [audio] = await this.convert(bytes, pinned);
      format = { ext: 'ogg', mimetype: 'audio/ogg' };
      audioFormat = { container: 'ogg', demuxer: 'ogg' };
    }
    const limit = this.options.maxUploadBytes();
    let uploads = [audio];
    if (audio.length > limit) {
      if (!this.options.ffmpeg()) throw new VoiceError(`That ${what} is ${MB(audio.length)}, over the audio provider's limit of ${MB(limit)}, and ffmpeg is not available to shrink or split it.`);
      // Mono Opus speech at SPEECH_BITRATE; pieces sized to stay under the limit with room for the container.
      const seconds = Math.max(1, Math.floor(((limit * 0.85) / (SPEECH_BITRATE / 8))));
      const [whole] = await this.convert(audio, audioFormat);
      uploads = whole.length > limit ? await this.convert(audio, audioFormat, seconds) : [whole];
      if (uploads.some((u) => u.length > limit)) throw new VoiceError(`That ${what} is too large for the audio provider even after compressing it (limit ${MB(limit)}).`);
    }
    const texts: string[] = [];
    for (const [i, upload] of uploads.entries()) {
      const converted = upload !== bytes;
      const file: UploadFile = converted
        ? { bytes: upload, fileName: `voice-${i + 1}.ogg`, mimetype: 'audio/ogg' }
        : { bytes: upload, fileName: `voice.${format.ext}`, mimetype: format.mimetype };
      texts.push(await this.upload(file, what));
    }
    const text = texts.filter(Boolean).join(' ').trim();
    if (!text) throw new VoiceError(`I could not make out any words in that ${what}.`);
    return { text, audio, format: audio === bytes ? format : { ext: 'ogg', mimetype: 'audio/ogg' }, parts: uploads.length };
  }

  private async upload(file: UploadFile, what: string): Promise<string> {
    try {
      return await this.options.provider.transcribe(file);
    } catch (err) {
      if (err instanceof KeysExhaustedError) throw new VoiceError(`I can't hear voice notes right now: ${err.message}. Please type your message, or try again later.`);
      if (err instanceof ProviderDownError) throw new VoiceError(`I could not transcribe that ${what}: ${err.message}. Please send it again in a few minutes.`);
      if (err instanceof NoTranscriptError) throw new VoiceError(`I could not transcribe that ${what}: the audio provider answered without any text.`);
      if (err instanceof RequestRejectedError) {
        if (err.status === 413) throw new VoiceError(`That ${what} is too large for the audio provider.`);
        throw new VoiceError(`The audio provider could not read that ${what} (HTTP ${err.status}); it may be damaged or in a format it does not support.`);
      }
      throw err;
    }
  }
}
