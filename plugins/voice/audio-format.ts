/** A container format the audio provider accepts as it is, with the extension and mimetype to upload it under. */
export interface AudioFormat {
  ext: 'ogg' | 'mp3' | 'm4a' | 'wav' | 'flac' | 'webm';
  mimetype: string;
}

/**
 * Recognises an audio file by its first bytes (never by the name or mimetype the sender claims). WhatsApp voice
 * notes are Ogg/Opus and must be uploaded as `.ogg`: the provider reads the file name's extension and rejects `.oga`.
 * Returns undefined for anything else (it then goes through ffmpeg).
 *
 * @example sniffAudio(Buffer.from('OggS...')) // { ext: 'ogg', mimetype: 'audio/ogg' }
 */
export function sniffAudio(bytes: Buffer): AudioFormat | undefined {
  if (bytes.length < 12) return undefined;
  const ascii = (from: number, to: number) => bytes.subarray(from, to).toString('latin1');
  if (ascii(0, 4) === 'OggS') return { ext: 'ogg', mimetype: 'audio/ogg' };
  if (ascii(0, 3) === 'ID3' || (bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0 && (bytes[1] & 0x06) !== 0)) return { ext: 'mp3', mimetype: 'audio/mpeg' };
  if (ascii(4, 8) === 'ftyp') return { ext: 'm4a', mimetype: 'audio/mp4' };
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return { ext: 'wav', mimetype: 'audio/wav' };
  if (ascii(0, 4) === 'fLaC') return { ext: 'flac', mimetype: 'audio/flac' };
  if (bytes.readUInt32BE(0) === 0x1a45dfa3) return { ext: 'webm', mimetype: 'audio/webm' };
  return undefined;
}
