import type { LegHealth } from '../../services/providers/types.js';
import { legStateInWords } from '../status/status-report.js';
import type { CapabilityStatus } from '../../api/capability-status.js';

/** A capability served by provider legs, from their live state. */
export function legsCapability(health: LegHealth[], serves: (leg: LegHealth) => boolean, none: string): CapabilityStatus {
  const legs = health.filter(serves);
  if (!legs.length) return { ok: false, detail: none };
  const impaired = legs.filter((l) => l.state !== 'healthy');
  const words = impaired.map((l) => `${l.name} ${legStateInWords(l)}`).join('; ');
  if (impaired.length === legs.length) return { ok: false, detail: `no provider can answer now: ${words}` };
  if (impaired.length) return { ok: true, degraded: true, detail: `${legs.length - impaired.length} of ${legs.length} provider leg(s) usable; ${words}` };
  return { ok: true, detail: `${legs.length} provider leg(s): ${legs.map((l) => l.name).join(', ')}` };
}

