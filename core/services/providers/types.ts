
/** One leg of the provider chain, as other endpoints (vision) see it. */
export interface ProviderLeg {
  /** Stable, key-free name: `primary`, `second`, `audio-1`, … */
  readonly name: string;
  readonly kind: 'gateway' | 'audio';
  /** Base URL normalised to end in exactly one `/v1`. */
  readonly baseUrl: string;
  /** The root without `/v1` (the health probe; the Anthropic SDK adds `/v1` itself). */
  readonly rootUrl: string;
  readonly apiKey: string;
  readonly model: string;
  readonly premiumModel: string;
}

/** Health of one leg for the dashboard and the log (never the key). */
export interface LegHealth {
  name: string;
  kind: ProviderLeg['kind'];
  model: string;
  premiumModel: string;
  /** Live state: usable, resting after a failure, key rejected (until restart), quota used up. */
  state: LegCondition;
  coolingDownUntil?: number;
  lastFailure?: string;
  /** The last failure in plain words for owners ("the key was rejected (HTTP 401)"). */
  lastError?: string;
  requests: number;
  failures: number;
  /** What the one tiny request at start found (absent when none was sent: STARTUP_PROBE=off, or not done yet). */
  startCheck?: LegStartCheck;
}

/** The start check's outcome for one leg, as owners see it (never a key). */
export interface LegStartCheck {
  ok: boolean;
  /** Usable but not fully (rate-limited at start). */
  degraded?: boolean;
  /** `rejected-key`, `unknown-model`, `unreachable`, … (see LegCheck). */
  problem?: string;
  /** What was found, in words. */
  detail: string;
  /** The setting to correct, in words, when it failed. */
  fix?: string;
}

export type LegCondition = 'healthy' | 'cooling-down' | 'rejected' | 'exhausted';
