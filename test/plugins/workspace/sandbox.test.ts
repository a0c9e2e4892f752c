import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HttpFake } from '../../../app/testing/http-fake.js';
import type { TestBot } from '../../../app/testing/index.js';
import { putFile, sandboxWorks, startWorkspaceApp, texts, USER, workspaceDir } from './helpers.js';

/**
 * Escape attempts against the real bubblewrap sandbox, through `/ws run` as a user would do them.
 * Where bubblewrap does not work, every run must be refused with the reason instead.
 */
describe('workspace sandbox (real bubblewrap)', function () {
  this.timeout(60_000);
  let t: TestBot;
  let dir: string;
  let web: HttpFake;
  const SECRET = 'sk-secret-value-987654321';

  before(async () => {
    web = await HttpFake.start({ 'GET /': { status: 200, text: 'service web port' } });
    t = await startWorkspaceApp({ env: { API_KEY: SECRET, BASE_URL: 'http://127.0.0.1:9', MODEL: 'm', CONFIG_TOKEN: 'tok-123456789' } });
    // What a real deployment has next to the workspaces: a WhatsApp session, .env, and someone else's workspace.
    await mkdir(path.join(t.dir, 'data', 'session_auth'), { recursive: true });
    await writeFile(path.join(t.dir, 'data', 'session_auth', 'creds.json'), '{"noiseKey":"SESSION-SECRET"}');
    await writeFile(path.join(t.dir, '.env'), `API_KEY=${SECRET}\n`);
    await t.transport.push({ text: '/ws', senderId: '62899990000@s.whatsapp.net' });
    await putFile(await workspaceDir(t, '62899990000@s.whatsapp.net'), 'private.txt', 'OTHER-USERS-DATA');
    await t.transport.push({ text: '/ws', senderId: USER });
    dir = await workspaceDir(t);
  });
  after(async () => {
    await t.stop();
    await web.close();
  });

  async function run(code: string, name = 'probe.py'): Promise<string> {
    await putFile(dir, name, code);
    const replies = texts(await t.transport.push({ text: `/ws run ${name}`, senderId: USER }));
    expect(replies, 'one reply per run').to.have.length(1);
    return replies[0];
  }

  it('refuses to run code and says why when bubblewrap is missing (or runs it when present)', async () => {
    const reply = await run('print(6 * 7)');
    if (sandboxWorks(t)) expect(reply).to.include('42').and.to.match(/exit code 0/);
    else expect(reply).to.match(/sandbox does not work/);
  });

  describe('escape attempts', () => {
    before(function () {
      // Escapes can only be attempted inside a working bubblewrap (installed by .ci/run); without one, the test
      // above checks that code is refused with the reason instead.
      if (!sandboxWorks(t)) this.skip();
    });

    it('cannot read the session, .env, config.json or other workspaces (relative or absolute)', async () => {
      const targets = [
        '../../session_auth/creds.json',
        '../../../.env',
        '../../../config.json',
        path.join(t.dir, 'data', 'session_auth', 'creds.json'),
        path.join(t.dir, '.env'),
        path.join(t.dir, 'config.json'),
        path.join(await workspaceDir(t, '62899990000@s.whatsapp.net'), 'private.txt'),
        '/work/main/package.json',
        '/etc/passwd',
        '/etc/shadow',
        '/root/.bashrc',
      ];
      const reply = await run(`
import json
for p in ${JSON.stringify(targets)}:
    try:
        data = open(p).read()
        print('READ', p, data[:40])
    except Exception as e:
        print('DENIED', p, type(e).__name__)
`);
      expect(reply).not.to.include('READ ');
      expect(reply.match(/DENIED/g)).to.have.length(targets.length);
      expect(reply).not.to.include('SESSION-SECRET');
      expect(reply).not.to.include('OTHER-USERS-DATA');
      expect(reply).not.to.include(SECRET);
    });

    it("cannot see the service's environment or host processes", async () => {
      const reply = await run(`
import os
print('ENV', sorted(os.environ))
print('PIDS', len([p for p in os.listdir('/proc') if p.isdigit()]))
for p in os.listdir('/proc'):
    if p.isdigit():
        try: print('CMD', open('/proc/%s/cmdline' % p, 'rb').read().replace(b'\\0', b' ')[:60])
        except Exception as e: print('CMD?', e)
try:
    print('ENVIRON1', open('/proc/1/environ','rb').read())
except Exception as e:
    print('ENVIRON1 denied', type(e).__name__)
`);
      expect(reply).not.to.include(SECRET);
      expect(reply).not.to.match(/API_KEY|CONFIG_TOKEN|BASE_URL/);
      expect(reply).not.to.include('mocha');
      expect(reply).not.to.include('node');
      const pids = Number(/PIDS (\d+)/.exec(reply)?.[1]);
      expect(pids).to.be.within(1, 4); // the sandbox's own init and python only
    });

    it('has no network: connecting to the web port on 127.0.0.1 fails', async () => {
      const reply = await run(`
import socket
for host in ['127.0.0.1', 'localhost', '1.1.1.1']:
    try:
        s = socket.create_connection((host, ${web.port}), timeout=2)
        print('CONNECTED', host)
    except Exception as e:
        print('NO-NET', host, type(e).__name__)
`);
      expect(reply).not.to.include('CONNECTED');
      expect(reply.match(/NO-NET/g)).to.have.length(3);
      expect(web.requests).to.have.length(0);
    });

    it('cannot write outside the workspace; writes inside land in the workspace', async () => {
      const reply = await run(`
import os
for p in ['../escaped.txt', '/usr/escaped.txt', '/escaped.txt', '../../session_auth/evil.json']:
    try:
        open(p, 'w').write('x')
        print('WROTE', p)
    except Exception as e:
        print('BLOCKED', p, type(e).__name__)
open('/tmp/scratch.txt', 'w').write('scratch')
open('inside.txt', 'w').write('made in the sandbox')
print('done')
`);
      expect(reply).to.include('done');
      expect(existsSync(path.join(path.dirname(dir), 'escaped.txt'))).to.equal(false);
      expect(existsSync(path.join(t.dir, 'data', 'session_auth', 'evil.json'))).to.equal(false);
      expect(existsSync('/usr/escaped.txt')).to.equal(false);
      expect(existsSync(path.join(dir, 'inside.txt'))).to.equal(true);
      const listing = texts(await t.transport.push({ text: '/ws files', senderId: USER }))[0];
      expect(listing).to.include('inside.txt');
    });

    it('kills an endless loop at the time limit, and the bot answers others meanwhile', async () => {
      // A bot of its own with a 1 s wall-clock limit (the shared one allows 30 s, for ordinary runs on a busy machine):
      // a loop uses at most as much CPU as time passes, so the wall-clock limit ends it, not the CPU one. The shortest
      // limits there are: the loop burns a core for as long as it is let run.
      const short = await startWorkspaceApp({ workspace: { timeLimitSeconds: 1, cpuSeconds: 1 } });
      try {
        await short.transport.push({ text: '/ws', senderId: USER });
        await putFile(await workspaceDir(short), 'loop.py', 'while True:\n    pass\n');
        const running = short.transport.push({ text: '/ws run loop.py', senderId: USER });
        // Another user in another chat is served while the loop runs.
        const other = texts(await short.transport.push({ text: '/ws help', senderId: '62877770000@s.whatsapp.net' }));
        expect(other[0]).to.include('/ws run');
        const reply = texts(await running).find((r) => r.startsWith('▶ loop.py')) ?? '';
        expect(reply).to.match(/time limit of 1 s|CPU time/);
      } finally {
        await short.stop();
      }
    });

    it('contains a fork bomb', async () => {
      const reply = await run(`
import os
n = 0
try:
    while True:
        if os.fork() == 0:
            import time
            time.sleep(30)
            os._exit(0)
        n += 1
except OSError as e:
    print('fork refused after', n, 'children:', type(e).__name__)
`);
      const children = Number(/after (\d+) children/.exec(reply)?.[1]);
      expect(children, reply).to.be.lessThan(40);
      // The sandbox's processes are gone: the next run works normally.
      expect(await run('print("still fine")')).to.include('still fine');
    });

    it('stops a 1 GB allocation with an out-of-memory message', async () => {
      const reply = await run('data = bytearray(1024 * 1024 * 1024)\nprint("allocated", len(data))');
      expect(reply).not.to.include('allocated');
      expect(reply).to.match(/ran out of memory \(limit 256 MB\)/);
    });

    it('cuts giant output at the cap', async () => {
      const reply = await run('import sys\nwhile True:\n    sys.stdout.write("y" * 100000)\n');
      expect(reply).to.match(/printed more than 4.0 KB/);
      expect(reply.length).to.be.lessThan(6000);
    });

    it('keeps the workspace within its disk quota', async () => {
      const reply = await run(`
try:
    with open('big.bin', 'wb') as f:
        f.write(b'0' * (5 * 1024 * 1024))
    print('WROTE BIG')
except OSError as e:
    print('too big:', e.strerror)
`);
      expect(reply).to.match(/too big: File too large|over its quota/);
      const listing = texts(await t.transport.push({ text: '/ws files', senderId: USER }))[0];
      expect(listing).not.to.include('big.bin');
      expect(reply).to.match(/new file\(s\) it wrote were deleted/);
    });

    it('removes symlinks the code makes, so the host never follows them', async () => {
      const reply = await run(`
import os
os.symlink('${path.join(t.dir, '.env')}', 'env-link.txt')
os.symlink('/', 'root-link')
print('linked')
`);
      expect(reply).to.include('linked');
      expect(reply).to.match(/Removed 2 link/);
      expect(existsSync(path.join(dir, 'env-link.txt'))).to.equal(false);
      const show = texts(await t.transport.push({ text: '/ws show env-link.txt', senderId: USER }))[0];
      expect(show).not.to.include(SECRET);
    });
  });

  it('refuses hostile script names', async () => {
    for (const name of ['../../session_auth/creds.json', '/etc/passwd', '.env', 'notes.txt']) {
      const reply = texts(await t.transport.push({ text: `/ws run ${name}`, senderId: USER }))[0];
      expect(reply, name).to.match(/cannot run|only run python/);
    }
  });
});
