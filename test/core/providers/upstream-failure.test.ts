import { UpstreamFailure } from '../../../core/api/errors.js';
import { expect } from 'chai';
import { classifyFailure, COOLDOWN } from '../../../core/services/providers/failure.js';

// A plugin using another SDK than openai (vision: Anthropic) translates its errors into UpstreamFailure; the chain
// must then rest the leg exactly as for the same failure of a chat call.
describe('UpstreamFailure: a plugin’s errors in the chain’s terms', () => {
  it('a 429 with retry-after rests the leg that long; a 401 until restart; exhausted quota for hours', () => {
    const limited = classifyFailure(new UpstreamFailure('http', { status: 429, headers: { 'retry-after': '7' }, body: { error: { type: 'rate_limit_error' } } }));
    expect(limited).to.include({ kind: 'rate-limit', status: 429, cooldownMs: 7000 });
    expect(classifyFailure(new UpstreamFailure('http', { status: 401 }))).to.include({ kind: 'auth', cooldownMs: Infinity });
    const quota = classifyFailure(new UpstreamFailure('http', { status: 429, body: { error: { code: 'insufficient_quota', message: 'quota' } } }));
    expect(quota).to.include({ kind: 'quota', cooldownMs: COOLDOWN.quota });
    expect(classifyFailure(new UpstreamFailure('http', { status: 503 }))).to.include({ kind: 'server', cooldownMs: COOLDOWN.server });
  });

  it('timeouts and refused connections are told apart, with the connection code in the summary', () => {
    expect(classifyFailure(new UpstreamFailure('timeout'))).to.include({ kind: 'timeout' });
    expect(classifyFailure(new UpstreamFailure('network', { code: 'ECONNREFUSED' }))).to.include({ kind: 'network', summary: 'ECONNREFUSED' });
  });
});
