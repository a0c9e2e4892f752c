import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HistoryStore } from '../../../core/services/store/history.js';
import { completion, FakeGateway, lastUserText } from '../../fakes/openai-gateway.js';
import { ROOT, tempDir, writeConfig } from '../../helpers/checkout.js';
import { MemoryStore } from '../../../core/services/store/memory.js';
import { closeDatabase } from '../../../core/services/store/database.js';

const CHAT = '10000000001@s.whatsapp.net';

/** Whether this machine lets us mount a tmpfs in a private mount namespace (root, unshare, no seccomp block). */
function canMountTmpfs(): string | undefined {
  const probe = spawnSync('unshare', ['-m', 'sh', '-c', 'd=$(mktemp -d) && mount -t tmpfs -o size=1m tmpfs "$d" && umount "$d" && rmdir "$d"'], { encoding: 'utf8' });
  if (probe.error) return `unshare is not available (${probe.error.message})`;
  if (probe.status !== 0) return `mounting a tmpfs in a private mount namespace is forbidden here (${probe.stderr.trim() || `exit ${probe.status}`})`;
  return undefined;
}

/**
 * The whole run inside a private mount namespace: DATA_DIR is a 1 MB tmpfs seeded with stored data; the console
 * chat answers "hello", then the disk is filled and the user asks the bot to remember something. The data is copied
 * out before the namespace (and its tmpfs) goes away.
 */
const SCRIPT = String.raw`
set -u
D="$1"; NODE="$2"; CHAT_JS="$3"
mount -t tmpfs -o size=1m tmpfs "$D/data"
cp -a "$D/seed/." "$D/data/"
mkfifo "$D/in"
"$NODE" "$CHAT_JS" < "$D/in" > "$D/out.txt" 2> "$D/err.txt" &
pid=$!
exec 3> "$D/in"
wait_for() { i=0; until grep -q "$1" "$2"; do i=$((i+1)); [ $i -gt 400 ] && return 1; sleep 0.05; done; }
# The store database and its WAL, byte for byte (a row may sit in either).
wait_for_stored() { i=0; until cat "$D/data/store.db" "$D/data/store.db-wal" 2>/dev/null | grep -aq "$1"; do i=$((i+1)); [ $i -gt 400 ] && return 1; sleep 0.05; done; }
echo "hello" >&3
wait_for "primary: hello" "$D/out.txt"
# The answered message is on disk before the disk fills up.
# (A message is on disk once it is a row of the chat's history in the store database.)
wait_for_stored '"text":"primary: hello"'
dd if=/dev/zero of="$D/data/filler" bs=4k 2>/dev/null || true
echo "please remember that my locker is 42" >&3
wait_for "could not save" "$D/out.txt"
exec 3>&-
wait $pid
echo $? > "$D/code"
rm -f "$D/data/filler"
mkdir -p "$D/after"
cp -a "$D/data/." "$D/after/"
`;

describe('a full disk (tmpfs in a private mount namespace)', function () {
  this.timeout(40000);
  const forbidden = canMountTmpfs();
  let gw: FakeGateway;
  before(async function () {
    if (forbidden) this.skip();
    gw = await FakeGateway.start('primary', (req) => {
      const messages = req.json?.messages as Array<{ role: string }>;
      if (/remember/.test(lastUserText(req)) && messages.at(-1)?.role === 'user') {
        return { status: 200, json: completion(null, { toolCalls: [{ id: 'c1', name: 'remember', arguments: JSON.stringify({ fact: 'the locker is 42' }) }] }) };
      }
      // The model claims success whatever the tool said: the core must still tell the truth.
      if (messages.at(-1)?.role === 'tool') return { status: 200, json: completion('Done, I will remember that!') };
      return { status: 200, json: completion(`primary: ${lastUserText(req)}`) };
    });
  });
  after(() => gw?.close());

  it('tells the user, exits non-zero, leaves no temporary file and loses nothing already stored', async () => {
    const dir = await tempDir();
    try {
      await writeConfig(dir);
      await writeFile(path.join(dir, '.env'), `API_KEY=test-key-123456\nBASE_URL=${gw.url}/v1\nMODEL=m\n`);
      const seed = path.join(dir, 'seed');
      await mkdir(path.join(seed, 'history'), { recursive: true });
      await mkdir(path.join(seed, 'memory'), { recursive: true });
      await mkdir(path.join(dir, 'data'));
      await writeFile(path.join(seed, 'history', `${CHAT}.json`), JSON.stringify({ version: 1, messages: [{ id: 'old-1', role: 'user', text: 'an old message', at: 1 }] }));
      await writeFile(path.join(seed, 'memory', `${CHAT}.json`), JSON.stringify({ version: 1, facts: [{ text: 'likes green tea', at: 1 }] }));

      const code = await new Promise<number | null>((resolve, reject) => {
        const child = spawn('unshare', ['-m', 'sh', '-c', SCRIPT, 'sh', dir, process.execPath, path.join(ROOT, 'dist', 'cli', 'chat.js')], {
          cwd: dir,
          env: { PATH: process.env.PATH ?? '', CHAT },
          stdio: ['ignore', 'inherit', 'inherit'],
        });
        const timer = setTimeout(() => child.kill('SIGKILL'), 35000);
        child.on('error', reject);
        child.on('close', (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      expect(code).to.equal(0);
      const out = await readFile(path.join(dir, 'out.txt'), 'utf8');
      const err = await readFile(path.join(dir, 'err.txt'), 'utf8');
      expect(out).to.include("I could not save that: the server's disk is full.");
      expect(out).to.not.match(/Remembered\./);
      expect(Number((await readFile(path.join(dir, 'code'), 'utf8')).trim()), err).to.not.equal(0);
      expect(err).to.include('could not save').and.include('disk is full');
      expect(err).to.match(/NOT saved|could not be saved before the stop/);

      const after = path.join(dir, 'after');
      // What the next start reads: the store database (the seeded file taken in at the first start).
      const history = await new HistoryStore(after).recent(CHAT);
      expect(history.map((m) => m.text)).to.include.members(['an old message', 'hello', 'primary: hello']);
      // Memory lives in the store database: the seeded fact is there, the one asked for on the full disk is not.
      const memory = await new MemoryStore(after).facts(CHAT);
      closeDatabase(after);
      expect(memory.map((f) => f.text)).to.deep.equal(['likes green tea']);
      const all = await listAll(after);
      expect(all.filter((f) => f.includes('.tmp-') || f.includes('.write-test-'))).to.deep.equal([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start on a full disk, naming DATA_DIR, and leaves no .write-test probe behind', async () => {
    const dir = await tempDir();
    try {
      await mkdir(path.join(dir, 'data'));
      const settings = JSON.stringify(path.join(ROOT, 'dist', 'core', 'services', 'config', 'settings.js'));
      const probe = `import(${settings}).then((m) => { try { m.ensureDataDir(process.argv[1]); console.log('started'); } catch (e) { console.log('REFUSED ' + e.message); } });`;
      const script = `mount -t tmpfs -o size=64k tmpfs "$1/data" && (dd if=/dev/zero of="$1/data/filler" bs=4k 2>/dev/null; true) && "$2" -e "$3" "$1/data" > "$1/out.txt" && ls -A "$1/data" > "$1/left.txt"`;
      const run = spawnSync('unshare', ['-m', 'sh', '-c', script, 'sh', dir, process.execPath, probe], { encoding: 'utf8' });
      expect(run.status, run.stderr).to.equal(0);
      expect(await readFile(path.join(dir, 'out.txt'), 'utf8')).to.match(/^REFUSED DATA_DIR .* cannot hold the bot's data/);
      expect((await readFile(path.join(dir, 'left.txt'), 'utf8')).trim().split('\n')).to.deep.equal(['filler']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

async function listAll(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const rel = path.join(prefix, entry.name);
    if (entry.isDirectory()) out.push(...(await listAll(path.join(dir, entry.name), rel)));
    else out.push(rel);
  }
  return out;
}
