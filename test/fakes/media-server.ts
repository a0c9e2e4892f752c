import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on 127.0.0.1 (random port) that serves media files the way a plain web server does
 * (Content-Type, Content-Length, HEAD and byte ranges), for testing yt-dlp's generic extractor without internet.
 *
 * @example
 * const server = await MediaServer.start({ '/clip.mp4': { file: 'clip.mp4', type: 'video/mp4' } });
 * // yt-dlp `${server.url}/clip.mp4`
 */
export class MediaServer {
  readonly hits: string[] = [];
  private constructor(private readonly server: http.Server) {}

  static async start(files: Record<string, { file: string; type: string }>): Promise<MediaServer> {
    let media!: MediaServer;
    const server = http.createServer(async (req, res) => {
      const path = (req.url ?? '/').split('?')[0]!;
      media.hits.push(`${req.method} ${path}`);
      const entry = files[path];
      if (!entry) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      const body = await readFile(entry.file);
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
      let start = 0;
      let end = body.length - 1;
      if (range) {
        start = Number(range[1]);
        if (range[2]) end = Math.min(end, Number(range[2]));
      }
      const headers = { 'content-type': entry.type, 'content-length': String(end - start + 1), 'accept-ranges': 'bytes' };
      if (range) res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${body.length}` });
      else res.writeHead(200, headers);
      res.end(req.method === 'HEAD' ? undefined : body.subarray(start, end + 1));
    });
    media = new MediaServer(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return media;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
