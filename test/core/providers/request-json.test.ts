import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { loadSettings } from '../../../core/services/config/settings.js';
import { createLogger } from '../../../core/services/log/logger.js';
import { ProviderChain } from '../../../core/services/providers/provider-chain.js';
import { frozenPart, isFrozenPart, requestJson } from '../../../core/services/providers/request-json.js';
import type { ChatMessage } from '../../../core/services/providers/chat-types.js';
import { FakeGateway } from '../../fakes/openai-gateway.js';

describe('request JSON made from frozen parts', () => {
  it('is the text JSON.stringify makes of the same body: key order, undefined left out, null for an empty array item', () => {
    const system = frozenPart({ role: 'system', content: 'You are "Bot".\nBe brief — and kind.' });
    const turns = [frozenPart({ role: 'user', content: 'Hi \u2028 there\\' }), frozenPart({ role: 'assistant', content: 'Hello! 👋' })];
    const tools = frozenPart([{ type: 'function', function: { name: 'roll', description: 'Roll a die', parameters: { type: 'object', properties: { sides: { type: 'integer' } } } } }]);
    const bodies: object[] = [
      { model: 'm', messages: [system, ...turns] },
      { model: 'm', messages: [system, ...turns, { role: 'user', content: [{ type: 'text', text: 'new' }] }], tools, max_tokens: 50 },
      { model: 'm', messages: [system, undefined, () => 1, null], temperature: undefined, stop: ['\n'], seed: 0, nested: { a: [1, { b: undefined }] } },
      { messages: frozenPart([system]), model: 'x', tools: [] },
      { model: 'm', messages: 'not an array', n: null },
    ];
    for (const body of bodies) {
      expect(requestJson(body)).to.equal(JSON.stringify(body));
      // Twice: the second time from the texts the first one made.
      expect(requestJson(body)).to.equal(JSON.stringify(body));
    }
  });

  it('freezes a part deeply, so its text can never be older than the part', () => {
    const shape = frozenPart({ type: 'function', function: { name: 'roll', parameters: { properties: { sides: { type: 'integer' } } } } });
    expect(isFrozenPart(shape)).to.equal(true);
    expect(() => {
      (shape.function.parameters.properties.sides as { type: string }).type = 'string';
    }).to.throw(TypeError);
    expect(() => {
      (shape as { type: string }).type = 'other';
    }).to.throw(TypeError);
    expect(requestJson({ tools: [shape] })).to.equal('{"tools":[{"type":"function","function":{"name":"roll","parameters":{"properties":{"sides":{"type":"integer"}}}}}]}');
  });

  it('makes a part that is not frozen again on every request, with what it holds now', () => {
    const turn = { role: 'user', content: 'first' };
    const messages = [frozenPart({ role: 'system', content: 's' }), turn];
    expect(requestJson({ messages })).to.contain('"first"');
    turn.content = 'second';
    messages.push({ role: 'user', content: 'third' });
    const sent = JSON.parse(requestJson({ messages })) as { messages: Array<{ content: string }> };
    expect(sent.messages.map((m) => m.content)).to.deep.equal(['s', 'second', 'third']);
    expect(isFrozenPart(turn)).to.equal(false);
  });

  it('gives the same part the same text in any request, and different parts their own', () => {
    const a = frozenPart({ role: 'user', content: 'chat A: my address is 1 Elm St' });
    const b = frozenPart({ role: 'user', content: 'chat B: hello' });
    expect(JSON.parse(requestJson({ messages: [a] })).messages[0].content).to.equal('chat A: my address is 1 Elm St');
    expect(JSON.parse(requestJson({ messages: [b] })).messages[0].content).to.equal('chat B: hello');
    expect(JSON.parse(requestJson({ messages: [b, a] })).messages.map((m: { content: string }) => m.content)).to.deep.equal(['chat B: hello', 'chat A: my address is 1 Elm St']);
  });

  describe('through the provider chain', () => {
    let gateway: FakeGateway;
    beforeEach(async () => {
      gateway = await FakeGateway.start('second');
    });
    afterEach(() => gateway.close());

    it('the gateway receives each request as JSON, the frozen turns and the new one in order, with the model and tools', async () => {
      const settings = loadSettings({ cwd: '/nonexistent', env: { API_KEY: 'sk-test', BASE_URL: gateway.url, MODEL: 'main-b' } });
      const chain = new ProviderChain(settings, createLogger({ level: 'silent', pretty: false, destination: new PassThrough() }));
      const system = frozenPart({ role: 'system' as const, content: 'You are Bot.' });
      const history: ChatMessage[] = [frozenPart({ role: 'user' as const, content: 'one' }), frozenPart({ role: 'assistant' as const, content: 'first answer' })];
      const tools = frozenPart([{ type: 'function' as const, function: { name: 'roll', description: 'Roll a die', parameters: { type: 'object', properties: {} } } }]);
      await chain.complete([system, ...history, { role: 'user', content: 'two' }], { tools, maxTokens: 99 });
      history.push(frozenPart({ role: 'user' as const, content: 'two' }), frozenPart({ role: 'assistant' as const, content: 'second answer' }));
      await chain.complete([system, ...history.slice(1), { role: 'user', content: 'three "quoted"' }], { tools });
      const [first, second] = gateway.chats();
      expect(first.headers['content-type']).to.equal('application/json');
      expect(first.json).to.deep.equal({
        model: 'main-b',
        messages: [
          { role: 'system', content: 'You are Bot.' },
          { role: 'user', content: 'one' },
          { role: 'assistant', content: 'first answer' },
          { role: 'user', content: 'two' },
        ],
        tools: [{ type: 'function', function: { name: 'roll', description: 'Roll a die', parameters: { type: 'object', properties: {} } } }],
        max_tokens: 99,
      });
      expect(second.json.messages).to.deep.equal([
        { role: 'system', content: 'You are Bot.' },
        { role: 'assistant', content: 'first answer' },
        { role: 'user', content: 'two' },
        { role: 'assistant', content: 'second answer' },
        { role: 'user', content: 'three "quoted"' },
      ]);
      expect(second.json).to.not.have.property('max_tokens');
    });
  });
});
