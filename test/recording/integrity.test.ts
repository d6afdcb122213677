// What a damaged or hostile file can do to the reader. A recording that was never closed has no gzip checksum, and
// deflate decodes most flipped bytes into other valid text (one flip inside a back-referenced string renamed a
// target in 736 lines): every block is sealed by its own checksum and no flip may change data silently. The loss
// figure of an unclosed file comes from the file itself, not its modification time (a copy reads "4 min"). A small
// file that inflates to 1 GiB is refused early, in bounded memory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { copyFile, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createGzip } from 'node:zlib';
import {
  RecordingOpenError,
  RecordingWriter,
  readRecording,
  type Recording,
} from '../../src/main/core/recording';
import { SyntheticPdSession } from '../support/synthetic-pd-session';
import { header, manualClock, tempDir } from './helpers';

const ROOT = resolve(__dirname, '../..');
const READ_BOMB = join(__dirname, 'fixtures', 'read-bomb.ts');

let dir: string;
let cleanup: () => Promise<void>;
/** A recording copied while its writer was still open (after a flush): no end record, no gzip trailer. */
let unclosed: string;
let base: Recording;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('pdc-integrity-'));
  const start = Date.UTC(2026, 0, 5, 8);
  const live = join(dir, 'live.pdrec.jsonl.gz');
  const sim = new SyntheticPdSession(start, 5, 120_000);
  const clock = manualClock(start);
  const w = await RecordingWriter.open(live, header({ startedAt: start }), { clock });
  for (let i = 0; i < 90; i++) {
    const tick = sim.step();
    clock.set(sim.now);
    for (const s of tick.scrapes) w.appendScrape(s.ts, s.target, s.exp);
    for (const e of tick.events) w.appendEvent(e);
    for (const j of tick.journal) w.appendJournal(j);
    if (i % 2 === 1) await w.flush();
  }
  await w.flush();
  unclosed = join(dir, 'unclosed.pdrec.jsonl.gz');
  await copyFile(live, unclosed);
  await w.close();
  base = await readRecording(unclosed);
}, 60_000);
afterAll(async () => {
  await cleanup();
});

const seriesKey = (s: Recording['series'][number]): string =>
  `${s.target}|${s.name}|${JSON.stringify(s.labels)}`;

/** Why `part` is not the start of `base`, value for value; null when it is. */
function notAPrefix(part: Recording, whole: Recording): string | null {
  if (JSON.stringify(part.header) !== JSON.stringify(whole.header)) return 'header differs';
  const byKey = new Map(whole.series.map((s) => [seriesKey(s), s]));
  for (const s of part.series) {
    const f = byKey.get(seriesKey(s));
    if (!f) return `series ${seriesKey(s)} is not in the intact file`;
    if (s.v.length > f.v.length) return `${s.name} has more values than the intact file`;
    for (let i = 0; i < s.v.length; i++)
      if (s.t[i] !== f.t[i] || !Object.is(s.v[i], f.v[i])) return `${s.name}[${i}] differs`;
  }
  for (const [what, a, b] of [
    ['journal', part.journal, whole.journal],
    ['events', part.events, whole.events],
    ['unit states', part.unitStates, whole.unitStates],
  ] as const)
    if (JSON.stringify(a) !== JSON.stringify(b.slice(0, a.length))) return `${what} differ`;
  return null;
}

function identical(a: Recording, b: Recording): boolean {
  return (
    notAPrefix(a, b) === null &&
    a.series.length === b.series.length &&
    a.series.every((s, i) => s.v.length === b.series[i].v.length) &&
    a.journal.length === b.journal.length &&
    a.events.length === b.events.length &&
    a.lastTs === b.lastTs
  );
}

describe('single-byte damage in a recording that was never closed', () => {
  it('is reported with the last intact time, or provably changes nothing; it never changes data silently', async () => {
    const bytes = await readFile(unclosed);
    expect(base.closedCleanly).toBe(false);
    expect(base.warnings).toHaveLength(1);
    expect(base.journal.length).toBeGreaterThan(20);
    // Every byte of the gzip header and the header line's block, then positions spread over the whole file; two
    // kinds of flip: one bit (a digit or a letter's case changes) and every bit.
    const positions = new Set<number>();
    for (let p = 0; p < 64; p++) positions.add(p);
    const step = Math.max(1, Math.floor(bytes.length / 160));
    for (let p = 64; p < bytes.length; p += step) positions.add(p);
    for (let p = Math.max(0, bytes.length - 16); p < bytes.length; p++) positions.add(p);
    const outcome = { refused: 0, reported: 0, harmless: 0 };
    const silent: string[] = [];
    const path = join(dir, 'flipped.pdrec.jsonl.gz');
    for (const p of positions)
      for (const mask of [0x20, 0xff]) {
        const copy = Buffer.from(bytes);
        copy[p] ^= mask;
        await writeFile(path, copy);
        let rec: Recording;
        try {
          rec = await readRecording(path);
        } catch (err) {
          expect(err, `byte ${p} ^ ${mask}`).toBeInstanceOf(RecordingOpenError);
          outcome.refused++;
          continue;
        }
        // Damage, or data after the last intact record dropped because nothing vouches for it.
        const damage = rec.warnings.find((w) =>
          /damaged|checksum does not match|nothing vouches for/.test(w),
        );
        if (damage) {
          expect(damage, `byte ${p} ^ ${mask}`).toMatch(/\d{4}-\d\d-\d\dT[\d:.]+Z/);
          const why = notAPrefix(rec, base);
          if (why)
            silent.push(`byte ${p} ^ 0x${mask.toString(16)}: reported, but what was shown changed: ${why}`);
          outcome.reported++;
        } else if (identical(rec, base)) outcome.harmless++;
        else
          silent.push(
            `byte ${p} ^ 0x${mask.toString(16)}: ${notAPrefix(rec, base) ?? 'fewer records'}, no warning`,
          );
      }
    console.log(
      `[integrity] ${positions.size * 2} single-byte flips of a ${bytes.length}-byte unclosed recording: ` +
        `${outcome.refused} refused, ${outcome.reported} reported as damage, ${outcome.harmless} changed nothing`,
    );
    expect(silent).toEqual([]);
    expect(outcome.reported).toBeGreaterThan(positions.size);
  }, 300_000); // ~480 opens; a loaded 2-core runner has taken over 120 s
});

describe('what an unclosed recording may have lost', () => {
  it("comes from the file's own content: changing its modification time changes nothing", async () => {
    const p = join(dir, 'copied.pdrec.jsonl.gz');
    await copyFile(unclosed, p);
    const before = (await readRecording(p)).warnings;
    expect(before[0]).toMatch(
      /not closed .*ends after \d{4}-.*written to disk every 2 s, so a crash lost at most the 2 s after it/,
    );
    // A copy made 4 minutes after the last record, and one made a day later.
    for (const later of [240_000, 86_400_000]) {
      const t = new Date(base.lastTs + later);
      await utimes(p, t, t);
      expect((await stat(p)).mtimeMs).toBe(t.getTime());
      expect((await readRecording(p)).warnings).toEqual(before);
    }
    expect(before.join(' ')).not.toMatch(/4 min|last written/);
  });
});

describe('a gzip bomb', () => {
  /** A valid header, then `bytes` of `fill` (one repeated line or zeros), streamed through zlib: ~1 GiB → a few MB. */
  async function bomb(name: string, fill: Buffer, bytes: number): Promise<string> {
    const p = join(dir, name);
    const gz = createGzip({ level: 1 });
    const out = createWriteStream(p);
    gz.pipe(out);
    gz.write(
      JSON.stringify({
        ...header(),
        format: 'pd-console-recording',
        version: 1,
        minorVersion: 1,
        flushIntervalMs: 2000,
      }) + '\n',
    );
    // About 1 MiB of whole copies of `fill`.
    const block = Buffer.concat(Array.from({ length: Math.ceil((1 << 20) / fill.length) }, () => fill));
    for (let n = 0; n < bytes; n += block.length) if (!gz.write(block)) await once(gz, 'drain');
    gz.end();
    await once(out, 'close');
    return p;
  }

  async function readInChild(
    path: string,
  ): Promise<{ message: string; code: string; ms: number; peakGrowth: number }> {
    const child = spawn(process.execPath, ['--import', 'tsx', READ_BOMB, path], {
      cwd: ROOT,
      // The fixture's imports use the @shared alias of the node project.
      env: { ...process.env, TSX_TSCONFIG_PATH: 'tsconfig.node.json' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    await once(child, 'exit');
    const line = out.trim().split('\n').pop() ?? '';
    try {
      return JSON.parse(line);
    } catch {
      throw new Error(`the reader child printed no result: ${out}`);
    }
  }

  it.each([
    [
      '1 GiB of one valid journal record, repeated',
      '{"k":"journal","t":1767600000400,"r":"decode","u":"sglang-decode.service","p":6,"m":"Decode batch. #running-req: 57"}\n',
    ],
    ['1 GiB of zeros after the header', '\0'],
  ])(
    'is refused early with a message naming the file, the limit and what to do: %s',
    async (what, fill) => {
      const p = await bomb(`bomb-${fill.length}.pdrec.jsonl.gz`, Buffer.from(fill), 1024 ** 3);
      const size = (await stat(p)).size;
      const r = await readInChild(p);
      console.log(
        `[gzip bomb] ${what}: ${(size / 1048576).toFixed(1)} MiB file (inflates to 1 GiB); refused after ${r.ms.toFixed(0)} ms, ` +
          `peak RSS growth ${(r.peakGrowth / 1048576).toFixed(0)} MiB: ${r.message.slice(0, 120)}…`,
      );
      expect(r.code).toBe('not-a-recording');
      expect(r.message).toContain(p);
      expect(r.message).toMatch(/inflated to more than .* over 100×/);
      expect(r.message).toMatch(/Check where the file came from/);
      // Loose: the whole gigabyte would be >1 GiB of memory; the reader stops at a few tens of MiB.
      expect(r.peakGrowth).toBeLessThan(200 * 1024 * 1024);
    },
    120_000,
  );
});
