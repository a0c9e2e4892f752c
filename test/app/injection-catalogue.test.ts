import { expect } from 'chai';
import { describeInjectionCatalogue, injectionVectors } from '../../app/testing/index.js';

/**
 * The public test kit's prompt-injection catalogue, run against the bundled carriers (documents, links, remind, the
 * access commands) and the catalogue's canary: every vector, a model that obeys any instruction it sees, zero effects.
 */
describe('prompt-injection catalogue: its size', () => {
  it('holds at least 40 WhatsApp-shaped vectors, each named once', () => {
    const names = injectionVectors().map((v) => v.name);
    expect(names.length).to.be.at.least(40);
    expect(new Set(names).size).to.equal(names.length);
  });
});

describeInjectionCatalogue();
