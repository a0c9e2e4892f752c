import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { lstat, lutimes, mkdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createLogger } from '../../../core/services/log/logger.js';
import { startRetentionSweeper } from '../../../core/services/store/retention.js';
import { tempDir } from '../../helpers/checkout.js';

const DAY = 24 * 60 * 60 * 1000;

describe('retention sweeper', () => {
  let root: string;
  let data: string;
  let outside: string;
  let lines: Array<Record<string, any>>;
  const now = Date.now();
  const log = () => {
    const sink = new PassThrough();
    sink.on('data', (c: Buffer) => lines.push(...c.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l))));
    return createLogger({ level: 'debug', pretty: false, destination: sink });
  };

  async function file(rel: string, ageDays: number, base = data): Promise<string> {
    const full = path.join(base, rel);
    await mkdir(path.dirname(full), { recursive: true });
    await writeFile(full, `content of ${rel}`);
    const t = new Date(now - ageDays * DAY);
    await utimes(full, t, t);
    return full;
  }
  const age = async (full: string, days: number) => {
    const t = new Date(now - days * DAY);
    await utimes(full, t, t);
  };

  beforeEach(async () => {
    lines = [];
    root = await tempDir('retention-');
    data = path.join(root, 'data');
    outside = path.join(root, 'outside');
    await mkdir(data, { recursive: true });
  });
  afterEach(async () => rm(root, { recursive: true, force: true }));

  it('removes media older than 30 days and generated files older than 7, keeps the rest and everything elsewhere', async () => {
    const oldMedia = await file('media/old.mp4', 31);
    const newMedia = await file('media/recent.ogg', 29);
    const oldGenerated = await file('generated/old.mp3', 8);
    const newGenerated = await file('generated/new.mp3', 6);
    const oldJobFile = await file('generated/.job-abc/media.mp4.part', 10);
    await age(path.dirname(oldJobFile), 10);
    const history = await file('history/chat.json', 400);
    const archive = await file('audio_archive/voice.ogg', 400);
    const sweeper = startRetentionSweeper({ dataDir: data, log: log(), now: () => now });
    const reports = await sweeper.sweepNow();
    sweeper.stop();

    expect(existsSync(oldMedia)).to.equal(false);
    expect(existsSync(oldGenerated)).to.equal(false);
    expect(existsSync(path.dirname(oldJobFile))).to.equal(false);
    for (const kept of [newMedia, newGenerated, history, archive]) expect(existsSync(kept), kept).to.equal(true);
    expect(existsSync(path.join(data, 'media'))).to.equal(true);
    expect(existsSync(path.join(data, 'generated'))).to.equal(true);
    expect(reports.find((r) => r.folder === 'media')?.removed).to.deep.equal(['old.mp4']);
    expect(reports.find((r) => r.folder === 'generated')?.removed.sort()).to.deep.equal([path.join('.job-abc', 'media.mp4.part'), 'old.mp3']);
    const said = lines.filter((l) => /^retention: removed/.test(l.msg)).map((l) => l.msg);
    expect(said).to.include('retention: removed 1 file(s) older than 30 days from media/');
    expect(said).to.include('retention: removed 2 file(s) older than 7 days from generated/');
  });

  it('runs once at start without being asked', async () => {
    const old = await file('generated/old.mp3', 30);
    const sweeper = startRetentionSweeper({ dataDir: data, log: log(), now: () => now });
    await sweeper.sweepNow(); // joins the sweep already started
    sweeper.stop();
    expect(existsSync(old)).to.equal(false);
  });

  it('never follows symlinks out of its folders', async () => {
    const target = await file('precious.txt', 365, outside);
    const targetDir = path.join(outside, 'dir');
    const inTargetDir = await file('dir/old.txt', 365, outside);
    await mkdir(path.join(data, 'media'), { recursive: true });
    const linkToFile = path.join(data, 'media', 'link.txt');
    const linkToDir = path.join(data, 'media', 'linkdir');
    await symlink(target, linkToFile);
    await symlink(targetDir, linkToDir);
    const t = new Date(now - 100 * DAY);
    await lutimes(linkToFile, t, t);
    await lutimes(linkToDir, t, t);
    const sweeper = startRetentionSweeper({ dataDir: data, log: log(), now: () => now });
    await sweeper.sweepNow();
    sweeper.stop();
    // The old links themselves go; what they point to stays.
    expect(existsSync(target)).to.equal(true);
    expect(existsSync(inTargetDir)).to.equal(true);
    expect(await lstat(linkToFile).then(() => 'still there', () => 'gone')).to.equal('gone');
    expect(await lstat(linkToDir).then(() => 'still there', () => 'gone')).to.equal('gone');
  });

  it('skips a retention folder that is itself a symlink, and says so', async () => {
    const elsewhere = await file('old.mp4', 365, outside);
    await symlink(outside, path.join(data, 'media'));
    const sweeper = startRetentionSweeper({ dataDir: data, log: log(), now: () => now });
    const reports = await sweeper.sweepNow();
    sweeper.stop();
    expect(existsSync(elsewhere)).to.equal(true);
    expect(reports.find((r) => r.folder === 'media')?.skipped).to.match(/symlink/);
    expect(lines.some((l) => l.level === 40 && /is a symlink/.test(l.msg))).to.equal(true);
  });

  it('is quiet and harmless when the folders do not exist yet', async () => {
    const sweeper = startRetentionSweeper({ dataDir: data, log: log(), now: () => now });
    const reports = await sweeper.sweepNow();
    sweeper.stop();
    expect(reports.map((r) => r.removed.length)).to.deep.equal([0, 0]);
    expect(lines.filter((l) => l.level >= 40)).to.deep.equal([]);
  });

  it("runs every added sweep in its pass; one that fails is logged and the others still run; a removed one no longer runs", async () => {
    const oldMedia = await file('media/old.mp4', 31);
    const sweeper = startRetentionSweeper({ dataDir: data, log: log(), now: () => now, intervalMs: DAY });
    await sweeper.whenSwept();
    const ran: string[] = [];
    sweeper.add('plugin broken', async () => {
      ran.push('broken');
      throw new Error('the disk said no');
    });
    sweeper.add('plugin notes', async () => void ran.push('notes'));
    const remove = sweeper.add('whatsapp', async () => void ran.push('whatsapp'));
    await sweeper.sweepNow();
    expect(ran).to.deep.equal(['broken', 'notes', 'whatsapp']);
    expect(existsSync(oldMedia)).to.equal(false);
    expect(lines.some((l) => l.level === 50 && l.part === 'plugin broken' && /the sweep of plugin broken failed/.test(l.msg))).to.equal(true);
    remove();
    await sweeper.sweepNow();
    sweeper.stop();
    expect(ran).to.deep.equal(['broken', 'notes', 'whatsapp', 'broken', 'notes']);
  });
});
