import { readFile } from 'node:fs/promises';
import { HttpFake, type FakeBehaviour, type RecordedRequest } from '../../app/testing/http-fake.js';

/**
 * A real HTTP server on 127.0.0.1 (random port, the shared HTTP-fake base) that serves media files the way a plain
 * web server does (Content-Type, Content-Length, HEAD and byte ranges), for testing yt-dlp's generic extractor
 * without internet.
 *
 * @example
 * const server = await MediaServer.start({ '/clip.mp4': { file: 'clip.mp4', type: 'video/mp4' } });
 * // yt-dlp `${server.url}/clip.mp4`
 */
export class MediaServer {
  private constructor(readonly http: HttpFake) {}

  static async start(files: Record<string, { file: string; type: string }>): Promise<MediaServer> {
    const routes = Object.fromEntries(Object.entries(files).map(([path, entry]) => [`* ${path}`, (req: RecordedRequest) => serve(req, entry)]));
    return new MediaServer(await HttpFake.start(routes));
  }

  /** Every request received, as `METHOD /path`, in order (a loopback server that must receive nothing checks it is empty). */
  get hits(): string[] {
    return this.http.requests.map((r) => `${r.method} ${r.path}`);
  }

  /** Forgets the requests received so far. */
  forget(): void {
    this.http.reset();
  }

  get url(): string {
    return this.http.url;
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

async function serve(req: RecordedRequest, entry: { file: string; type: string }): Promise<FakeBehaviour> {
  const body = await readFile(entry.file);
  const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? ''));
  let start = 0;
  let end = body.length - 1;
  if (range) {
    start = Number(range[1]);
    if (range[2]) end = Math.min(end, Number(range[2]));
  }
  const headers: Record<string, string> = { 'content-type': entry.type, 'content-length': String(end - start + 1), 'accept-ranges': 'bytes' };
  if (range) headers['content-range'] = `bytes ${start}-${end}/${body.length}`;
  // Node sends no body for a HEAD request, whatever is passed.
  return { status: range ? 206 : 200, body: body.subarray(start, end + 1), headers };
}
