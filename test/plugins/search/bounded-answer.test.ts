import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { SearchProviderError, tavilySearch } from '../../../plugins/search/search-provider.js';

const MB = 1024 * 1024;

/** The search provider's answer is read up to 2 MB and no further: a 300 MB answer is cut off as it arrives. */
describe('search: the provider answer is bounded by the bytes received', () => {
  it('a 300 MB answer is refused as a bad answer after about 2 MB, the rest never sent', async () => {
    let sent = 0;
    const server = http.createServer((req, res) => {
      req.resume();
      const filler = Buffer.alloc(64 * 1024, 'x');
      let made = 0;
      const body = new Readable({
        read() {
          if (made === 0) this.push('{"results":[{"title":"t","url":"https://example.org","content":"');
          if (made >= 300 * MB) return void this.push(null);
          made += filler.length;
          this.push(filler);
        },
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      body.on('data', (chunk: Buffer) => (sent += chunk.length));
      body.pipe(res);
      res.on('close', () => body.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const error = await tavilySearch({ apiKey: 'k-123456', baseUrl: url, timeoutMs: 30_000 }, 'anything', 5).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).to.be.instanceOf(SearchProviderError);
      expect((error as SearchProviderError).kind).to.equal('bad-answer');
      expect((error as Error).message).to.match(/too large/);
      expect(sent).to.be.above(2 * MB).and.below(12 * MB);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
