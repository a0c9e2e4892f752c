import type { ProviderLeg } from './types.js';

/**
 * Probes each gateway's root URL (without `/v1`) once. Any HTTP answer below 500 counts as healthy (the root of a
 * gateway often answers 404 or 401); a 5xx, a refused connection or a timeout is unhealthy. Never throws.
 */
export async function probeGateways(legs: ProviderLeg[], timeoutMs: number): Promise<Array<{ name: string; url: string; healthy: boolean; detail: string }>> {
  const gateways = legs.filter((l) => l.kind === 'gateway');
  return Promise.all(
    gateways.map(async (leg) => {
      const url = `${leg.rootUrl}/`;
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
        await res.body?.cancel();
        return { name: leg.name, url, healthy: res.status < 500, detail: `HTTP ${res.status}` };
      } catch (err) {
        const cause = (err as { cause?: { code?: string } }).cause?.code;
        return { name: leg.name, url, healthy: false, detail: cause ?? ((err as Error).name === 'TimeoutError' ? 'timed out' : (err as Error).message) };
      }
    }),
  );
}
