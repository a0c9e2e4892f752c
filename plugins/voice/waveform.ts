import { PCM_RATE } from './ffmpeg.js';

/** Bars of a WhatsApp voice note's waveform (`audioMessage.waveform`: 64 bytes, each 0–100). */
export const WAVEFORM_BARS = 64;

/**
 * A voice note's length in seconds and its waveform, from mono 16-bit PCM at `PCM_RATE` Hz: the mean loudness of each
 * of 64 equal stretches, scaled so the loudest is 100 — the way WhatsApp clients (and Baileys' own getAudioWaveform)
 * draw the bars. Silence gives 64 zeros.
 *
 * @example const { seconds, waveform } = voiceNoteShape(pcm); // 3.2, Uint8Array(64) [12, 80, 100, …]
 */
export function voiceNoteShape(pcm: Buffer): { seconds: number; waveform: Uint8Array } {
  const samples = Math.floor(pcm.length / 2);
  const means: number[] = [];
  const block = samples / WAVEFORM_BARS;
  for (let bar = 0; bar < WAVEFORM_BARS; bar++) {
    const from = Math.floor(bar * block);
    const to = Math.max(from + 1, Math.floor((bar + 1) * block));
    let sum = 0;
    let n = 0;
    for (let i = from; i < to && i < samples; i++, n++) sum += Math.abs(pcm.readInt16LE(i * 2));
    means.push(n ? sum / n : 0);
  }
  const loudest = Math.max(...means);
  const waveform = new Uint8Array(means.map((m) => (loudest > 0 ? Math.floor((100 * m) / loudest) : 0)));
  return { seconds: Math.max(1, Math.round(samples / PCM_RATE)), waveform };
}
