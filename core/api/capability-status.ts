/** A capability's state as the start log, `.status`, the dashboard and metrics show it (a leaf type: services report it too). */
export interface CapabilityStatus {
  ok: boolean;
  detail: string;
  /** Counts by state for metrics (e.g. audio keys usable/parked/rejected); never names or secrets. */
  counts?: Record<string, number>;
  /** Usable but impaired (amber): a provider leg cooling down or rejected while others work, a tool too old. */
  degraded?: boolean;
  /** For owners, when it is missing: the fix in plain words ("set AUDIO_API_KEYS in .env (npm run setup)"). */
  fix?: string;
  /**
   * Off only because the owner never set it up, or declined it in set-up (no audio key, no IMAGE_MODEL, no MCP
   * servers): an optional feature that is off, not something broken. The start log lists these together in one info
   * line and the status pages mark them "off" instead of a red ✘.
   */
  notConfigured?: boolean;
}

