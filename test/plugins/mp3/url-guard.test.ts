import { expect } from 'chai';
import { checkLink, isPrivateAddress, parseLink, UrlRefused } from '../../../plugins/mp3/url-guard.js';

async function refusal(text: string, resolve?: (host: string) => Promise<string[]>): Promise<string> {
  try {
    await checkLink(text, { resolve: resolve ?? (async () => ['93.184.215.14']) });
  } catch (err) {
    expect(err).to.be.instanceOf(UrlRefused);
    return (err as Error).message;
  }
  throw new Error(`${text} was accepted`);
}

describe('mp3 link guard (SSRF)', () => {
  it('refuses literal loopback, private, link-local and wrapped addresses', async () => {
    for (const url of ['http://127.0.0.1/', 'http://127.1.2.3:8080/x', 'http://10.0.0.1/', 'http://172.16.5.4/', 'http://192.168.1.1/', 'http://169.254.169.254/latest', 'http://0.0.0.0/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://[fe80::1]/', 'http://[fd00::1]/', 'http://2130706433/', 'http://0x7f.1/', 'http://100.64.0.1/']) {
      expect(await refusal(url), url).to.match(/local or private network address/);
    }
  });

  it('refuses names that are local or resolve to a private address (any of them)', async () => {
    expect(await refusal('http://localhost:3000/')).to.match(/private/);
    expect(await refusal('http://printer.local/')).to.match(/private/);
    expect(await refusal('https://evil.example/', async () => ['93.184.215.14', '10.0.0.8'])).to.match(/private/);
    expect(await refusal('https://rebind.example/', async () => ['::1'])).to.match(/private/);
    expect(await refusal('https://nowhere.invalid/', async () => { throw new Error('ENOTFOUND'); })).to.match(/can't find the site nowhere\.invalid/);
  });

  it('refuses what is not an http(s) link', async () => {
    expect(await refusal('hello')).to.match(/is not a link/);
    expect(await refusal('ftp://example.com/file')).to.match(/only fetch http and https/);
    expect(await refusal('file:///etc/passwd')).to.match(/only fetch http and https/);
    expect(await refusal('https://user:pw@example.com/')).to.match(/user name or password/);
  });

  it('accepts public links, with or without scheme', async () => {
    const resolve = async () => ['142.250.74.46', '2a00:1450:4001:82b::200e'];
    expect((await checkLink('https://www.youtube.com/watch?v=abc', { resolve })).hostname).to.equal('www.youtube.com');
    expect((await checkLink('youtu.be/abc', { resolve })).href).to.equal('https://youtu.be/abc');
    expect(parseLink('not a link')).to.equal(undefined);
    expect(isPrivateAddress('8.8.8.8')).to.equal(false);
    expect(isPrivateAddress('2001:4860:4860::8888')).to.equal(false);
  });

  it('lets loopback through only when the test switch is on', async () => {
    expect((await checkLink('http://127.0.0.1:4000/clip.mp4', { allowPrivateHosts: true })).port).to.equal('4000');
  });
});
