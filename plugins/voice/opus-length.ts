/** Opus granule positions count samples at 48 kHz, whatever the input rate was (RFC 7845 §4). */
const OPUS_RATE = 48_000;
/** The longest an Opus packet plays: 120 ms at 48 kHz. */
const MAX_PACKET_SAMPLES = 5760;
const PAGE_HEADER = 27;
const NO_GRANULE = 0xffff_ffff_ffff_ffffn;

/**
 * How long an Ogg/Opus file (a WhatsApp voice note) plays, in seconds, read from its pages the way ffprobe reads it:
 * the last page's granule position at 48 kHz (ffprobe's figure to the sample, pre-skip included). No decoding and no
 * program run: the same header arithmetic ffprobe does in the jail, on bytes already in memory, bounded by their
 * length — a voice note's length costs no process.
 *
 * Undefined unless the file is one clean Opus stream that starts at zero, every page where the one before says it
 * ends: anything else (Vorbis, several streams, a stream cut from a later point, a page cut short or bytes between
 * pages) is left to ffprobe in the jail to judge.
 *
 * @example opusSeconds(await readFile('note.ogg')) // 12.48
 */
export function opusSeconds(bytes: Buffer): number | undefined {
  let serial: number | undefined;
  let preSkip: number | undefined;
  let last: bigint | undefined;
  let started = false;
  let at = 0;
  while (at < bytes.length) {
    if (at + PAGE_HEADER > bytes.length || bytes.toString('latin1', at, at + 4) !== 'OggS' || bytes[at + 4] !== 0) return undefined;
    const segments = bytes[at + 26]!;
    const bodyAt = at + PAGE_HEADER + segments;
    if (bodyAt > bytes.length) return undefined;
    let bodyLength = 0;
    for (let i = 0; i < segments; i++) bodyLength += bytes[at + PAGE_HEADER + i]!;
    const end = bodyAt + bodyLength;
    if (end > bytes.length) return undefined;
    const pageSerial = bytes.readUInt32LE(at + 14);
    if (serial === undefined) {
      // The first page holds the identification header alone: 'OpusHead', version, channels, pre-skip (RFC 7845 §5.1).
      if (bodyLength < 19 || bytes.toString('latin1', bodyAt, bodyAt + 8) !== 'OpusHead') return undefined;
      serial = pageSerial;
      preSkip = bytes.readUInt16LE(bodyAt + 10);
    } else if (pageSerial !== serial) return undefined;
    const granule = bytes.readBigUInt64LE(at + 6);
    // Header pages have granule 0; the first with more is where audio starts. A stream that starts later than zero
    // (cut from a longer one) says so by more samples there than its packets can hold: ffprobe subtracts a start time.
    if (!started && granule !== NO_GRANULE && granule > 0n) {
      started = true;
      if (granule > BigInt(preSkip! + packetsOn(bytes, at, segments) * MAX_PACKET_SAMPLES)) return undefined;
    }
    if (granule !== NO_GRANULE) last = granule;
    at = end;
  }
  if (last === undefined) return undefined;
  const seconds = Number(last) / OPUS_RATE;
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

/** Packets that end on the page at `at` (a lacing value under 255 ends one). */
function packetsOn(bytes: Buffer, at: number, segments: number): number {
  let packets = 0;
  for (let i = 0; i < segments; i++) if (bytes[at + PAGE_HEADER + i]! < 255) packets++;
  return packets;
}
