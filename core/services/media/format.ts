import { open } from 'node:fs/promises';
import { MediaRefused } from '../../api/errors.js';

/**
 * What a chat says a file is. `sound` covers everything ffmpeg reads for its audio or picture stream (voice notes,
 * audio files, videos, documents with sound); `image` covers still pictures.
 */
export type MediaFamily = 'sound' | 'image';

/** A container the bot lets ffmpeg open, and the ffmpeg demuxer pinned for it. */
export interface PinnedFormat {
  /** The container as sniffed from the bytes (file-type's extension, e.g. `ogg`, `mp4`, `webm`, `png`). */
  container: string;
  /** The ffmpeg input format passed as `-f` before `-i`, so ffmpeg never guesses (and never picks `hls` or `concat`). */
  demuxer: string;
}

/**
 * The allow-list. Every entry is a self-contained container: none of these demuxers opens another file or URL
 * (the mov demuxer's external data references are off by default). Playlists (HLS/m3u8), concat and ffconcat
 * lists, SDP, and plain text have no entry, so they never reach ffmpeg.
 */
const SOUND_DEMUXERS: Record<string, string> = {
  ogg: 'ogg', oga: 'ogg', ogv: 'ogg', opus: 'ogg', spx: 'ogg', ogm: 'ogg', ogx: 'ogg',
  mp4: 'mov', m4a: 'mov', m4v: 'mov', m4b: 'mov', m4p: 'mov', mov: 'mov', '3gp': 'mov', '3g2': 'mov',
  mkv: 'matroska', webm: 'matroska',
  mp3: 'mp3',
  wav: 'wav',
  amr: 'amr',
  flac: 'flac',
  aac: 'aac',
  aif: 'aiff',
};

const IMAGE_DEMUXERS: Record<string, string> = {
  png: 'png_pipe',
  jpg: 'jpeg_pipe',
  webp: 'webp_pipe',
  gif: 'gif',
};

/** The containers allowed per family, for messages and the README. */
export const ALLOWED_CONTAINERS: Record<MediaFamily, string[]> = {
  sound: ['Ogg/Opus', 'MP4/MOV/M4A/3GP', 'Matroska/WebM', 'MP3', 'WAV', 'AMR', 'FLAC', 'AAC', 'AIFF'],
  image: ['PNG', 'JPEG', 'WebP', 'GIF'],
};

/** file-type reads at most this much; 4 KiB covers every magic number on the list. */
const HEAD_BYTES = 4100;

/**
 * Pins the ffmpeg input format of untrusted media from its first bytes (never from the name or the mimetype the
 * sender claims). Throws MediaRefused for anything not on the family's allow-list.
 *
 * @example
 * const format = await pinFormat(bytes, 'sound'); // { container: 'ogg', demuxer: 'ogg' }
 * await pinFormat(Buffer.from('#EXTM3U\n...'), 'sound'); // throws MediaRefused
 */
export async function pinFormat(bytes: Uint8Array, family: MediaFamily): Promise<PinnedFormat> {
  const head = bytes.subarray(0, HEAD_BYTES);
  // Loaded on the first media file, not at start-up (~50 ms of modules a text-only bot never needs).
  const found = head.length ? await (await import('file-type')).fileTypeFromBuffer(head) : undefined;
  const demuxer = found && (family === 'sound' ? SOUND_DEMUXERS : IMAGE_DEMUXERS)[found.ext];
  if (!found || !demuxer) throw new MediaRefused(refusal(family, found?.ext));
  return { container: found.ext, demuxer };
}

/** Same as pinFormat for a file on disk (reads only its first bytes). */
export async function pinFileFormat(file: string, family: MediaFamily): Promise<PinnedFormat> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(head, 0, HEAD_BYTES, 0);
    return await pinFormat(head.subarray(0, bytesRead), family);
  } finally {
    await handle.close();
  }
}

function refusal(family: MediaFamily, ext: string | undefined): string {
  const seen = ext ? ` (it looks like ${ext.toUpperCase()})` : '';
  if (family === 'image') {
    return `I could not open that image: I only open pictures in the usual formats (${ALLOWED_CONTAINERS.image.join(', ')}), and this file is not one of them${seen}. Please send it as a normal photo.`;
  }
  return `I can't read that file as audio or video: I only open the usual formats (${ALLOWED_CONTAINERS.sound.join(', ')}), and this file is not one of them${seen}. Please send it as a normal voice note, audio file or video.`;
}

/**
 * The ffmpeg/ffprobe options that go right before `-i`: the pinned demuxer, and a protocol whitelist so that even a
 * demuxer that could follow a reference would only ever read the one local file or pipe it was given.
 *
 * @example
 * spawn(ffmpeg, ['-hide_banner', ...inputArgs(format), '-i', file, ...]);
 */
export function inputArgs(format: PinnedFormat): string[] {
  return ['-protocol_whitelist', 'file,pipe', '-f', format.demuxer];
}
