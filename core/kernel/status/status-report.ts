import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { capabilityMark, type Capabilities } from '../capabilities/capabilities.js';
import type { LegHealth } from '../../services/providers/types.js';
import type { SessionState } from '../port/transport.js';

/** The tokens one answer cost: all input (its cached part apart), output, and how many requests it took. */
export interface ReplyCost {
  prompt: number;
  cached: number;
  completion: number;
  requests: number;
  at: number;
}

/** How the bot is doing right now: what `.status`, the dashboard and the log show. Never holds a key. */
export interface StatusReport {
  version: string;
  startedAt: number;
  uptimeMs: number;
  link: SessionState;
  legs: LegHealth[];
  capabilities: Array<{ name: string; ok: boolean; detail: string; degraded?: boolean }>;
  /** Today's (UTC) token use per "leg · model". */
  usageToday: Array<{ key: string; tokens: number; requests: number; prompt: number; cached: number }>;
  /** What the bot's last answer cost in tokens (all its requests), since the start. */
  lastReply?: ReplyCost;
}

/** The source the app gives the bot; the bot asks it whenever someone wants the status. */
export type StatusSource = () => Promise<StatusReport>;

let version: string | undefined;
/** The project's version from its package.json (found by walking up from this file: works from source and dist/). */
export function projectVersion(): string {
  if (version) return version;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++, dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: string };
      if (pkg.version) return (version = pkg.version);
    } catch {
      // not here: keep walking up
    }
  }
  return (version = 'unknown');
}

/** "3 h 12 min", "45 s". */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 16) + ' UTC';

/** One leg's state in words: "healthy", "cooling down until 14:05 UTC (rate-limited (HTTP 429))". */
export function legStateInWords(leg: LegHealth): string {
  switch (leg.state) {
    case 'healthy':
      return leg.lastError ? `healthy (last problem: ${leg.lastError})` : 'healthy';
    case 'rejected':
      return `rejected: ${leg.lastError ?? 'the key was rejected'}; skipped until restart`;
    case 'exhausted':
      return `used up until ${leg.coolingDownUntil ? clock(leg.coolingDownUntil) : 'restart'}${leg.lastError ? ` (${leg.lastError})` : ''}`;
    default:
      return `cooling down until ${leg.coolingDownUntil ? clock(leg.coolingDownUntil) : 'restart'}${leg.lastError ? ` (${leg.lastError})` : ''}`;
  }
}

/** A leg's start check in words: "start check ✘ the gateway rejected the key (HTTP 401) — fix: correct API_KEY in .env". */
export function startCheckInWords(check: NonNullable<LegHealth['startCheck']>): string {
  const mark = check.ok ? (check.degraded ? '⚠' : '✔') : '✘';
  return `start check ${mark} ${check.detail}${!check.ok && check.fix ? ` — fix: ${check.fix}` : ''}`;
}

function linkInWords(link: SessionState): string {
  const me = [link.me?.id, link.me?.lid].filter(Boolean).join(', ');
  switch (link.status) {
    case 'linked':
      return `linked${me ? ` as ${me}` : ''}`;
    case 'qr':
      return 'not linked: waiting for the QR code to be scanned';
    case 'connecting':
      return 'connecting…';
    default:
      return `offline${link.lastError ? ` (${link.lastError})` : ''}${link.retryAt ? `, next try at ${clock(link.retryAt)}` : ''}`;
  }
}

/** The status as a WhatsApp message for owners (`.status`). */
export function statusText(report: StatusReport, botName: string): string {
  const lines = [`*${botName} status* (version ${report.version}, up ${humanDuration(report.uptimeMs)})`, '', `WhatsApp: ${linkInWords(report.link)}`, '', '*AI providers*'];
  if (!report.legs.length) lines.push('none configured');
  for (const leg of report.legs) {
    lines.push(`${leg.state === 'healthy' ? '🟢' : leg.state === 'cooling-down' ? '🟠' : '🔴'} ${leg.name} (${leg.model}): ${legStateInWords(leg)}`);
    if (leg.startCheck) lines.push(`   ${startCheckInWords(leg.startCheck)}`);
  }
  lines.push('', '*Capabilities*');
  for (const c of report.capabilities) lines.push(`${capabilityMark(c)} ${c.name}: ${c.detail}`);
  lines.push('', '*Usage today*');
  if (!report.usageToday.length) lines.push('none yet');
  for (const u of report.usageToday) lines.push(`${u.key}: ${u.tokens} tokens in ${u.requests} request(s)${u.prompt ? `, input ${u.prompt} of which ${u.cached} cached` : ''}`);
  if (report.lastReply) {
    const r = report.lastReply;
    lines.push('', `*Last reply*: ${r.prompt + r.completion} tokens (input ${r.prompt}, of which ${r.cached} cached; output ${r.completion}) in ${r.requests} request(s)`);
  }
  return lines.join('\n');
}

/** Builds the report from the running parts. */
export function buildStatusReport(parts: {
  startedAt: number;
  now?: number;
  link: SessionState;
  legs: LegHealth[];
  capabilities: Capabilities;
  usageDays: Record<string, Record<string, { total: number; requests: number; prompt?: number; cached?: number }>> | undefined;
  lastReply?: ReplyCost;
}): StatusReport {
  const now = parts.now ?? Date.now();
  const today = new Date(now).toISOString().slice(0, 10);
  return {
    version: projectVersion(),
    startedAt: parts.startedAt,
    uptimeMs: now - parts.startedAt,
    link: parts.link,
    legs: parts.legs,
    capabilities: parts.capabilities.report(),
    usageToday: Object.entries(parts.usageDays?.[today] ?? {}).map(([key, c]) => ({ key: key.replace('|', ' · '), tokens: c.total, requests: c.requests, prompt: c.prompt ?? 0, cached: c.cached ?? 0 })),
    ...(parts.lastReply ? { lastReply: parts.lastReply } : {}),
  };
}
