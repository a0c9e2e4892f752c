import type { SearchHit } from './archive.js';

const when = (at: number) => new Date(at).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
const who = (hit: SearchHit) => hit.note.senderName || hit.note.senderId.split('@')[0];

/**
 * The `.vn` answer: ranked hits with sender, time and a short quote.
 *
 * @example formatHitsForChat(hits, 'invoice') // '🎤 2 voice notes about "invoice":\n1. Sari, 2025-03-01 09:12 UTC: "…"'
 */
export function formatHitsForChat(hits: SearchHit[], query: string): string {
  if (!hits.length) return `No voice note in this chat matches "${query}".`;
  const lines = hits.map((h, i) => `${i + 1}. ${who(h)}, ${when(h.note.at)}: "${h.quote}"`);
  return [`🎤 ${hits.length} voice note${hits.length === 1 ? '' : 's'} in this chat about "${query}":`, ...lines].join('\n');
}

/** The tool result for the model: the same facts as data, transcripts clipped. */
export function formatHitsForModel(hits: SearchHit[]): unknown {
  if (!hits.length) return { results: [], note: 'No voice note in this chat matches.' };
  return {
    results: hits.map((h) => ({
      sender: who(h),
      time: when(h.note.at),
      transcript: h.note.transcript.length > 600 ? `${h.note.transcript.slice(0, 599)}…` : h.note.transcript,
    })),
  };
}
