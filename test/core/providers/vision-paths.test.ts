import { expect } from 'chai';
import { askVision, visionPathOf } from '../../../core/builtin.js';
import type { ProviderLeg } from '../../../core/services/providers/types.js';
import { visionStatus } from '../../../plugins/vision/index.js';
import type { FakeGateway } from '../../fakes/openai-gateway.js';
import { startOpenAiOnlyGateway } from '../../fakes/openai-only-gateway.js';

/**
 * The path that worked for images on a leg is remembered for that leg of that app only. Two apps of one process (two
 * bots of a test worker, or a bot started after another whose fake gateway had the same port) name their legs alike:
 * one app's lesson must not make the other skip `/v1/messages` or call a leg verified that it never asked.
 */
describe('vision: the path that worked is remembered per app, not per leg name and address', () => {
  let gateway: FakeGateway;
  beforeEach(async () => {
    gateway = await startOpenAiOnlyGateway('primary');
  });
  afterEach(() => gateway.close());

  /** A leg as an app's provider chain makes it at start: the same name and address in both apps. */
  const legOfAnApp = (): ProviderLeg => ({ name: 'primary', kind: 'gateway', baseUrl: `${gateway.url}/v1`, rootUrl: gateway.url, apiKey: 'vision-key', model: 'm', premiumModel: '' });
  /** The app's AI service as askVision and the status use it: its one leg, asked once. */
  const aiOf = (leg: ProviderLeg) => ({
    failover: <T>(_purpose: string, run: (leg: ProviderLeg) => Promise<T>) => run(leg),
    legs: () => [leg],
    health: () => [],
  });
  const request = (question: string) => ({ image: { mediaType: 'image/png' as const, data: Buffer.from('png') }, question, system: 's', premium: false, maxTokens: 50, timeoutMs: 60_000 });
  const messagesCalls = () => gateway.http.received('POST /v1/messages').length;

  it("one app learns its gateway has no /v1/messages; another app's leg of the same name and address still asks it and is not yet verified", async () => {
    const first = aiOf(legOfAnApp());
    expect((await askVision(first, request('what is it?'))).text).to.equal('primary sees via chat: what is it?');
    expect(messagesCalls()).to.equal(1);
    expect(visionStatus(first).detail).to.equal('primary: works via /v1/chat/completions (no /v1/messages)');
    await askVision(first, request('and this?'));
    expect(messagesCalls(), 'the first app skips /v1/messages from then on').to.equal(1);

    const other = aiOf(legOfAnApp());
    expect(visionPathOf(other.legs()[0]!)).to.equal(undefined);
    expect(visionStatus(other).detail).to.equal('primary: not yet verified');
    expect((await askVision(other, request('yours?'))).text).to.equal('primary sees via chat: yours?');
    expect(messagesCalls(), 'the other app tried /v1/messages itself').to.equal(2);
  });
});
