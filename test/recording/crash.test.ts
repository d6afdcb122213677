// Crash safety and damaged files: kill -9 while recording loses at most the last 5 s; truncated and corrupted
// files open up to the damage with a warning naming the time; foreign files and newer formats get clear errors;
// a full disk stops the recording with a message while the caller keeps running.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REVIEW_OVERVIEW } from '../../src/main/core/review/overview-table';
import { spawn } from 'node:child_process';
import { copyFile, open, readFile, truncate, writeFile, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  RecordingOpenError,
  RecordingWriter,
  readRecording,
  type Recording,
} from '../../src/main/core/recording';
import { SyntheticPdSession } from '../support/synthetic-pd-session';
import { scanMarked } from '../../src/main/core/recording/members';
import { header, manualClock, resealed, tempDir } from './helpers';

const ROOT = resolve(__dirname, '../..');
const FIXTURE = join(__dirname, 'fixtures', 'crash-writer.ts');

let dir: string;
let cleanup: () => Promise<void>;
/** A 10-minute realistic recording written with sync points every 2 s of recorded time. */
let full: string;
let fullRec: Recording;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  full = join(dir, 'full.pdrec.jsonl.gz');
  await writeSession(full, true);
  fullRec = await readRecording(full);
}, 120_000);

async function writeSession(path: string, overview: boolean): Promise<void> {
  const start = Date.UTC(2026, 0, 5, 8);
  const sim = new SyntheticPdSession(start, 3, 600_000);
  const clock = manualClock(start);
  const w = await RecordingWriter.open(path, header({ startedAt: start }), {
    clock,
    overview: overview && REVIEW_OVERVIEW,
  });
  for (let i = 0; i < 600; i++) {
    const tick = sim.step();
    clock.set(sim.now);
    for (const s of tick.scrapes) w.appendScrape(s.ts, s.target, s.exp);
    for (const e of tick.events) w.appendEvent(e);
    for (const j of tick.journal) w.appendJournal(j);
  }
  await w.close();
}

/** The same session without an overview (one gzip member). */
const writeLegacyCopy = (path: string): Promise<void> => writeSession(path, false);
afterAll(async () => {
  await cleanup();
});

/** Every series of `part` must be the start of the same series in the intact file, value for value. */
function expectPrefixOfFull(part: Recording): number {
  const byKey = new Map(fullRec.series.map((s) => [`${s.target}|${s.name}|${JSON.stringify(s.labels)}`, s]));
  let samples = 0;
  for (const s of part.series) {
    const f = byKey.get(`${s.target}|${s.name}|${JSON.stringify(s.labels)}`);
    expect(f, s.name).toBeDefined();
    expect(s.v.length).toBeLessThanOrEqual(f!.v.length);
    for (let i = 0; i < s.v.length; i++) {
      if (s.t[i] !== f!.t[i] || !Object.is(s.v[i], f!.v[i]))
        throw new Error(`${s.name}[${i}] differs from the intact file`);
    }
    samples += s.v.length;
  }
  return samples;
}

/** Where the data of a file with an overview ends: the last overview member and the index member follow it. */
async function dataBytes(path: string, size: number): Promise<number> {
  const marked = scanMarked(await readFile(path));
  const tail = marked.length >= 2 ? marked[marked.length - 2] : null;
  return tail && tail.kind === 'overview' ? tail.at : size;
}

async function damagedCopy(
  name: string,
  change: (path: string, size: number) => Promise<void>,
): Promise<string> {
  const p = join(dir, name);
  await copyFile(full, p);
  const size = (await readFile(p)).length;
  await change(p, size);
  return p;
}

describe('kill -9 while recording', () => {
  it('keeps everything appended more than 5 s before the kill', async () => {
    const path = join(dir, 'killed.pdrec.jsonl.gz');
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, path], {
      cwd: ROOT,
      // The fixture's imports use the @shared alias of the node project.
      env: { ...process.env, TSX_TSCONFIG_PATH: 'tsconfig.node.json' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<void>((r) => child.on('exit', () => r()));
    const started = Date.now();
    while (!out.includes('STARTED')) {
      if (Date.now() - started > 20_000) throw new Error(`writer child did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 6500));
    const killedAt = Date.now();
    child.kill('SIGKILL');
    await exited;

    const rec = await readRecording(path);
    expect(rec.closedCleanly).toBe(false);
    expect(rec.warnings[0]).toMatch(/not closed .*ends after \d{4}-\d\d-\d\dT/);
    const seq = rec.series.find((s) => s.name === 'seq')!;
    const n = seq.v.length;
    expect(n).toBeGreaterThan(50);
    // No holes: the values are exactly 0, 1, …, n-1.
    for (let i = 0; i < n; i++) expect(seq.v[i]).toBe(i);
    const ratio = rec.series.find((s) => s.name === 'ratio')!;
    for (let i = 0; i < ratio.v.length; i++) expect(ratio.v[i]).toBe(i / 7);
    const lastKept = seq.t[n - 1];
    expect(killedAt - lastKept, `lost ${killedAt - lastKept} ms`).toBeLessThanOrEqual(5000);
    const journal = rec.journal.map((j) => j.message);
    expect(journal).toEqual(Array.from({ length: journal.length }, (_, i) => `line ${i}`));
    expect(Math.abs(journal.length - n)).toBeLessThanOrEqual(1);
  }, 40_000);
});

describe('truncated files', () => {
  it.each([0.25, 0.5, 0.75, 0.99])(
    'open up to the cut at %s of the file, saying what was lost',
    async (frac) => {
      // Cut into the data: a closed 1.2 file ends with its last overview member and the index (tested below).
      const p = await damagedCopy(`cut-${frac}.pdrec.jsonl.gz`, async (path, size) =>
        truncate(path, Math.floor((await dataBytes(path, size)) * frac)),
      );
      const rec = await readRecording(p);
      expect(rec.closedCleanly).toBe(false);
      expect(rec.warnings).toHaveLength(1);
      expect(rec.warnings[0]).toMatch(/not closed/);
      expect(rec.warnings[0]).toContain(new Date(rec.lastTs).toISOString());
      const samples = expectPrefixOfFull(rec);
      expect(samples).toBeGreaterThan(0);
      expect(rec.stats.scrapes).toBeLessThan(fullRec.stats.scrapes);
      // Everything up to about the cut is read: decompressed bytes track compressed bytes (of the data: the
      // last overview member and the index of a file with an overview follow it).
      const whole = await readFile(full);
      const dataText = gunzipSync(whole.subarray(0, await dataBytes(full, whole.length))).length;
      const kept = rec.stats.decodedBytes / dataText;
      expect(kept).toBeGreaterThan(frac - 0.1);
      expect(kept).toBeLessThanOrEqual(1);
    },
  );

  it('keeps the header when cut right after it', async () => {
    const fh = await open(full, 'r');
    const buf = Buffer.alloc(4096);
    await fh.read(buf, 0, 4096, 0);
    await fh.close();
    // The header is flushed alone when the file is opened: the first sync-flush marker ends it.
    const marker = buf.indexOf(Buffer.from([0x00, 0x00, 0xff, 0xff]));
    expect(marker).toBeGreaterThan(10);
    const p = await damagedCopy('cut-header.pdrec.jsonl.gz', (path) => truncate(path, marker + 4));
    const rec = await readRecording(p);
    expect(rec.header.sessionId).toBe('test-session');
    expect(rec.series).toEqual([]);
    expect(rec.warnings[0]).toMatch(/not closed/);
  });

  it('says so when not even the header survived', async () => {
    const p = await damagedCopy('cut-tiny.pdrec.jsonl.gz', (path) => truncate(path, 12));
    await expect(readRecording(p)).rejects.toThrow(RecordingOpenError);
  });
});

describe('corrupted files', () => {
  it('open up to the damage and say from when data is missing', async () => {
    const p = await damagedCopy('corrupt.pdrec.jsonl.gz', async (path, size) => {
      const fh = await open(path, 'r+');
      let x = 12345;
      const junk = Buffer.from(
        Array.from({ length: 64 }, () => ((x = (x * 1103515245 + 12345) >>> 0) >>> 16) & 0xff),
      );
      await fh.write(junk, 0, junk.length, Math.floor(size * 0.6));
      await fh.close();
    });
    const rec = await readRecording(p);
    expect(rec.closedCleanly).toBe(false);
    expect(rec.warnings[0]).toMatch(/^The recording is damaged \(.+\): nothing after \d{4}-.+ could be read/);
    expectPrefixOfFull(rec);
    expect(rec.stats.scrapes).toBeLessThan(fullRec.stats.scrapes);
    expect(rec.stats.scrapes).toBeGreaterThan(fullRec.stats.scrapes * 0.3);
  });

  const flipTrailerCrc = async (path: string, size: number): Promise<void> => {
    const fh = await open(path, 'r+');
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, size - 6);
    b[0] ^= 0xff;
    await fh.write(b, 0, 1, size - 6);
    await fh.close();
  };

  it('in a file with block checksums, a damaged gzip checksum costs only the end: what is shown was checked', async () => {
    // The gzip trailer of the last data member (with an overview: the last overview member and the index follow it).
    const p = await damagedCopy('crc.pdrec.jsonl.gz', async (path, size) =>
      flipTrailerCrc(path, await dataBytes(path, size)),
    );
    const rec = await readRecording(p);
    expect(rec.closedCleanly).toBe(false);
    expect(rec.warnings[0]).toMatch(
      /^The recording is damaged \(.*incorrect data check.*\): nothing after \d{4}-.+ could be read; every block before it matched its checksum\.$/,
    );
    expectPrefixOfFull(rec);
    // zlib discards the output of the step that failed (at most one 64 KiB chunk: well under a minute here).
    expect(rec.stats.scrapes).toBeGreaterThan(fullRec.stats.scrapes - 3 * 60);
  });

  it('in a file with an overview, a damaged index costs nothing of the data: it is named with its byte offset', async () => {
    const p = await damagedCopy('crc-index.pdrec.jsonl.gz', flipTrailerCrc);
    const rec = await readRecording(p);
    expect(rec.closedCleanly).toBe(true);
    expect(rec.warnings).toEqual([
      expect.stringMatching(
        /^The recording's index at byte \d+ is damaged \(the member fails its gzip checksum\)\. It only makes opening fast: the data is intact and all of it is shown/,
      ),
    ]);
    expectPrefixOfFull(rec);
    expect(rec.stats.scrapes).toBe(fullRec.stats.scrapes);
  });

  it('in a file without an overview, a damaged gzip checksum costs only the end: what is shown was checked', async () => {
    const p = join(dir, 'crc-no-overview.pdrec.jsonl.gz');
    await writeLegacyCopy(p);
    const before = await readRecording(p);
    await flipTrailerCrc(p, (await readFile(p)).length);
    const rec = await readRecording(p);
    expect(rec.closedCleanly).toBe(false);
    expect(rec.warnings[0]).toMatch(
      /^The recording is damaged \(.*incorrect data check.*\): nothing after \d{4}-.+ could be read; every block before it matched its checksum\.$/,
    );
    expectPrefixOfFull(rec);
    // zlib discards the output of the step that failed, at most one 64 KiB chunk.
    expect(before.stats.decodedBytes - rec.stats.decodedBytes).toBeLessThanOrEqual(64 * 1024 + 8192);
  });

  it('in a file without block checksums (format 1.0), warn that values may be wrong when only the checksum disagrees', async () => {
    const text = gunzipSync(await readFile(full)).toString('utf8');
    const lines = text.split('\n').filter((l) => !l.startsWith('{"k":"sum",'));
    const h = JSON.parse(lines[0]);
    delete h.blockChecksums;
    lines[0] = JSON.stringify({ ...h, minorVersion: 0 });
    const p = join(dir, 'crc-v1.0.pdrec.jsonl.gz');
    await writeFile(p, gzipSync(lines.join('\n')));
    await flipTrailerCrc(p, (await readFile(p)).length);
    const rec = await readRecording(p);
    expect(rec.warnings[0]).toMatch(/checksum does not match .*values anywhere in it may be wrong/);
  });
});

describe('files that are not recordings, or too new', () => {
  const cases: [string, () => Buffer | string][] = [
    ['plain text', () => 'hello, this is a text file\n'],
    ['an empty file', () => ''],
    ['a PNG image', () => Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])],
    ['gzip of other JSON lines', () => gzipSync('{"format":"something-else","version":1}\n{"a":1}\n')],
    ['gzip of text', () => gzipSync('just some text\nmore\n')],
    ['gzip of binary without newlines', () => gzipSync(Buffer.alloc(2_000_000, 7))],
  ];
  it.each(cases)('rejects %s with "is not a PD Console recording"', async (what, content) => {
    const p = join(dir, `foreign-${what.replace(/\W+/g, '-')}`);
    await writeFile(p, content());
    const err = await readRecording(p).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RecordingOpenError);
    expect((err as RecordingOpenError).code).toBe('not-a-recording');
    expect((err as Error).message).toMatch(
      new RegExp(`^${p.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is not a PD Console recording: `),
    );
  });

  it('rejects a directory', async () => {
    const p = join(dir, 'a-directory');
    await mkdir(p);
    await expect(readRecording(p)).rejects.toThrow(/is not a PD Console recording: it is not a file/);
  });

  it('rejects a newer major version, asking to update the app', async () => {
    const p = join(dir, 'v2.pdrec.jsonl.gz');
    const h = { format: 'pd-console-recording', version: 2, minorVersion: 0, sessionId: 'x' };
    await writeFile(p, gzipSync(JSON.stringify(h) + '\n{"k":"s2","t":1}\n'));
    const err = (await readRecording(p).catch((e: unknown) => e)) as RecordingOpenError;
    expect(err.code).toBe('newer-version');
    expect(err.message).toMatch(
      /written by a newer PD Console \(format v2; this app reads v1\); update the app/,
    );
  });

  it('opens a newer minor version, skipping record kinds it does not know', async () => {
    const p = join(dir, 'v1.9.pdrec.jsonl.gz');
    const text = (await import('node:zlib')).gunzipSync(await readFile(full)).toString('utf8');
    const lines = text.split('\n');
    const h = JSON.parse(lines[0]);
    lines[0] = JSON.stringify({ ...h, minorVersion: 9, someNewField: { x: 1 } });
    lines.splice(
      5,
      0,
      '{"k":"gpu","t":1767600001000,"u":[0.5,0.7]}',
      '{"k":"gpu","t":1767600002000,"u":[0.5,0.7]}',
    );
    // A newer writer seals its blocks too (format 1.1).
    await writeFile(p, gzipSync(resealed(lines)));
    const rec = await readRecording(p);
    expect(rec.stats.scrapes).toBe(fullRec.stats.scrapes);
    expect(rec.warnings).toEqual([
      'Skipped 2 records of kinds this version does not know (gpu); a newer PD Console wrote them.',
    ]);
  });
});

describe('disk full while recording', () => {
  it('stops the recording with a clear message; the caller keeps running; the file stays readable', async () => {
    const path = join(dir, 'efbig.pdrec.jsonl.gz');
    // `ulimit -f` makes writes past 128 KiB fail with EFBIG, a real I/O error like ENOSPC.
    const child = spawn(
      'bash',
      ['-c', `ulimit -f 128 && exec "${process.execPath}" --import tsx "${FIXTURE}" "${path}" disk-full`],
      {
        cwd: ROOT,
        // The fixture's imports use the @shared alias of the node project.
        env: { ...process.env, TSX_TSCONFIG_PATH: 'tsconfig.node.json' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(out).toMatch(
      /RECORDING-ERROR Recording .*efbig\.pdrec\.jsonl\.gz stopped: .*file too large.*Monitoring continues without recording/,
    );
    expect(out).toMatch(/STILL-MONITORING appended=\d+ open=false/);
    expect(code).toBe(0);
    const rec = await readRecording(path);
    expect(rec.closedCleanly).toBe(false);
    expect(rec.series.find((s) => s.name === 'seq')!.v.length).toBeGreaterThan(5);
  }, 40_000);
});
