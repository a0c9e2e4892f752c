import { expect } from 'chai';
import { FakeGateway, failures } from '../fakes/openai-gateway.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/** `has` (asked several times per message) answers from a cheap check; it must say what the status says. */
describe('live capabilities: has() agrees with the status the owner sees', () => {
  let primary: FakeGateway;
  let second: FakeGateway;
  let t: TestApp | undefined;
  beforeEach(async () => {
    [primary, second] = await Promise.all([FakeGateway.start('primary'), FakeGateway.start('second')]);
  });
  afterEach(async () => {
    await t?.stop();
    t = undefined;
    await Promise.all([primary.close(), second.close()]);
  });

  it('chat, premium and audio, as the legs rest and are rejected', async () => {
    t = await startTestApp({
      env: {
        PRIMARY_GATEWAY_API_KEY: 'pk-primary-123456',
        PRIMARY_GATEWAY_BASE_URL: primary.url,
        PRIMARY_GATEWAY_MODEL: 'main-a',
        PRIMARY_GATEWAY_PREMIUM_MODEL: 'premium-a',
        API_KEY: 'sk-second-123456',
        BASE_URL: second.url,
        MODEL: 'main-b',
      },
    });
    const caps = t.app.capabilities;
    const say = async (text: string) => (await t!.transport.push({ text })).flatMap((a) => (a.type === 'text' ? [a.text] : []));
    const states = () => Object.fromEntries(['chat', 'premium', 'audio'].map((name) => {
      expect(caps.has(name), name).to.equal(caps.status(name).ok);
      expect(caps.lacks([name]), name).to.equal(!caps.status(name).ok);
      return [name, caps.has(name)];
    }));
    expect(states()).to.deep.equal({ chat: true, premium: true, audio: false });
    // The primary (the premium leg) is rate-limited: chat goes on through the second, premium is gone for now.
    primary.next(failures.rateLimit(60));
    expect(await say('hello')).to.deep.equal(['second: hello']);
    expect(states()).to.deep.equal({ chat: true, premium: false, audio: false });
    // The second's key is rejected: nothing can answer, and the bot says so instead of asking again.
    second.next(failures.badKey);
    const said = await say('still there?');
    expect(said.join(' ')).to.not.include('second:');
    expect(states()).to.deep.equal({ chat: false, premium: false, audio: false });
    expect(caps.lacks(['chat', 'audio'])).to.equal(true);
    expect(caps.lacks([])).to.equal(false);
  });
});
