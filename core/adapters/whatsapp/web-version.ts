import type { WAVersion } from '@whiskeysockets/baileys';

/** Baileys' `fetchLatestWaWebVersion` shape: never throws; on failure `isLatest` is false and `error` is set. */
export type VersionFetcher = () => Promise<{ version: WAVersion; isLatest: boolean; error?: unknown; bundled?: boolean }>;

export const DEFAULT_VERSION_REFRESH_MS = 6 * 60 * 60_000;

/**
 * A fetcher whose first answer is "Baileys' bundled version" without asking anyone; later calls (after a 405, or
 * once the refresh time has passed) ask `fetcher`. For a socket URL other than WhatsApp's own (WA_WEBSOCKET_URL).
 */
export function bundledVersionFirst(fetcher: VersionFetcher): VersionFetcher {
  let asked = false;
  return async () => {
    if (asked) return fetcher();
    asked = true;
    const { DEFAULT_CONNECTION_CONFIG } = await import('@whiskeysockets/baileys');
    return { version: DEFAULT_CONNECTION_CONFIG.version, isLatest: true, bundled: true };
  };
}

/**
 * The WhatsApp Web version to announce, looked up before each connection: a version fetched less than
 * `refreshMs` ago is reused; an older one is fetched again. A failed fetch is never kept (the next connection tries
 * again) and falls back to the last good version, else to Baileys' bundled one (undefined here). After a 405
 * ("client too old") `invalidate()` forces a new fetch.
 *
 * @example
 * const versions = new WebVersionSource(() => fetchLatestWaWebVersion({}));
 * const { version } = await versions.current(); makeWASocket({ ...(version ? { version } : {}) });
 */
export class WebVersionSource {
  private good: { version: WAVersion; at: number; bundled: boolean } | undefined;
  private inflight: Promise<void> | undefined;
  lastError: string | undefined;

  constructor(private readonly fetcher: VersionFetcher, private readonly refreshMs = DEFAULT_VERSION_REFRESH_MS, private readonly now: () => number = () => Date.now()) {}

  /** The version to use now (fetching when none is fresh); undefined means "Baileys' bundled version". */
  async current(): Promise<WAVersion | undefined> {
    if (!this.good || this.now() - this.good.at >= this.refreshMs) {
      this.inflight ??= this.refresh().finally(() => (this.inflight = undefined));
      await this.inflight;
    }
    return this.good?.version;
  }

  private async refresh(): Promise<void> {
    try {
      const result = await this.fetcher();
      if (result.isLatest && Array.isArray(result.version)) {
        this.good = { version: result.version, at: this.now(), bundled: Boolean(result.bundled) };
        this.lastError = undefined;
        return;
      }
      this.lastError = String((result.error as { message?: string } | undefined)?.message ?? result.error ?? 'no version in the answer');
    } catch (err) {
      this.lastError = (err as Error).message;
    }
  }

  /** The version was refused (405): fetch anew before the next connection. */
  invalidate(): void {
    this.good = undefined;
  }

  /**
   * True while the version announced is Baileys' bundled one, taken without a look-up (WA_WEBSOCKET_URL's first
   * connection): a 405 to it is the expected first answer of a proxy of WhatsApp, not news for the owner.
   */
  announcedUnchecked(): boolean {
    return Boolean(this.good?.bundled);
  }

  /** The last version fetched successfully, if any. */
  known(): WAVersion | undefined {
    return this.good?.version;
  }
}
