import { expect } from 'chai';
import { checkLink, isPrivateAddress, UrlRefused } from '../../../plugins/mp3/url-guard.js';

describe('download guard: every spelling of an inside address', () => {
  const inside = [
    // IPv4-compatible (::/96), hex and dotted
    '::7f00:1', '::127.0.0.1', '::a00:1', '::c0a8:101', '0:0:0:0:0:0:7f00:1', '::8.8.8.8',
    // IPv4-mapped and IPv4-translated (::ffff:0:0/96)
    '::ffff:7f00:1', '::ffff:127.0.0.1', '::ffff:0:7f00:1', '::ffff:0:127.0.0.1', '::ffff:0:a9fe:a9fe', '0:0:0:0:ffff:0:7f00:1',
    // NAT64 well-known prefix with an inside address, and the local-use prefix as a whole
    '64:ff9b::7f00:1', '64:ff9b::10.0.0.1', '64:ff9b::a9fe:a9fe', '64:ff9b:1::808:808', '64:ff9b:1:abcd::1',
    // 6to4 wrapping an inside address, and Teredo as a whole
    '2002:7f00:1::1', '2002:c0a8:101::', '2002:a9fe:a9fe::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::1',
    // plain inside IPv6, with and without zone
    '::1', '::', 'fe80::1%eth0', 'fd00::1', 'FE80::1',
  ];
  const outside = ['8.8.8.8', '2001:4860:4860::8888', '::ffff:8.8.8.8', '::ffff:0808:0808', '64:ff9b::808:808', '2002:808:808::1', '2a00:1450:4001:80b::200e'];

  it('classifies each IPv6 form of a loopback, private or link-local address as inside', () => {
    for (const address of inside) expect(isPrivateAddress(address), address).to.equal(true);
  });

  it('still lets public addresses through, in their wrapped forms too', () => {
    for (const address of outside) expect(isPrivateAddress(address), address).to.equal(false);
  });

  it('refuses links to them written as bracketed IPv6 literals', async () => {
    for (const host of ['[::7f00:1]', '[::ffff:0:7f00:1]', '[64:ff9b::7f00:1]', '[2002:7f00:1::1]', '[2001:0:4136:e378:8000:63bf:3fff:fdd2]']) {
      let refused: unknown;
      await checkLink(`http://${host}:8080/x`).catch((err) => (refused = err));
      expect(refused, host).to.be.instanceOf(UrlRefused);
    }
  });

  it('refuses a name whose DNS answer is such a spelling', async () => {
    let refused: unknown;
    await checkLink('https://media.example.com/v', { resolve: async () => ['2606:4700::1', '::ffff:0:7f00:1'] }).catch((err) => (refused = err));
    expect(refused).to.be.instanceOf(UrlRefused);
  });
});
