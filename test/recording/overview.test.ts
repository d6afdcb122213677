// Formats 1.2 and 1.3: the same session written as 1.1, 1.2 and 1.3 reads back to the same values; the overview of
// a 1.2 file is found from its index (or, when the index is missing or damaged, by a scan that says so), holds every
// stepMs row of the series asked for with exactly the recorded values, and a file cut short still shows its
// overview up to the cut. A review opened from a 1.2 overview shows what the full read shows, at its rows; one
// opened from a 1.3 overview (the signals evaluated as the session was written) shows exactly those values. A 1.1
// or 1.2 file opens the old way with a note, and `pd-console recording resave` rewrites it as 1.3, same content.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFile, mkdir, open, readFile, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { RecordingWriter, readRecording, type Recording } from '../../src/main/core/store/recording';
import { readOverview } from '../../src/main/core/store/recording/overview-reader';
import { scanMarked } from '../../src/main/core/store/recording/members';
import { isReviewInput } from '../../src/main/core/review/review-inputs';
import { buildReviewData } from '../../src/main/core/review/review-data';
import { loadReview, overviewReviewData, SLOW_FORMAT_NOTE } from '../../src/main/core/review/load-review';
import {
  REVIEW_OVERVIEW,
  tableReviewData,
  type TableRecord,
} from '../../src/main/core/review/overview-table';
import { ROWS_OVERVIEW_NOTE } from '../../src/main/core/store/recording/format';
import { resaveRecording } from '../../src/main/core/store/recording/resave';
import { SessionStore } from '../../src/main/core/store/recording/session-store';
import { runCli } from '../../src/main/cli/main';
import { SyntheticPdSession } from '../../bench/recording';
import { header, manualClock, tempDir } from './helpers';

const START = Date.UTC(2026, 0, 5, 8);
const SECONDS = 25 * 60;
const STEP = 15_000;

let dir: string;
let cleanup: () => Promise<void>;
let v11: string;
let v12: string;
let v13: string;
let full11: Recording;
let full12: Recording;
let full13: Recording;

async function writeSession(path: string, overview: false | '1.2' | '1.3'): Promise<void> {
  const sim = new SyntheticPdSession(START, 5, SECONDS * 1000);
  const clock = manualClock(START);
  const w = await RecordingWriter.open(path, header({ startedAt: START }), {
    clock,
    overview:
      overview === '1.3'
        ? { ...REVIEW_OVERVIEW, stepMs: STEP }
        : overview
          ? { stepMs: STEP, series: isReviewInput }
          : false,
  });
  for (let i = 0; i < SECONDS; i++) {
    const tick = sim.step();
    clock.set(sim.now);
    for (const s of tick.scrapes) w.appendScrape(s.ts, s.target, s.exp);
    for (const u of tick.unitStates) w.appendUnitState(u.ts, u.role, u.state);
    for (const h of tick.health) w.appendHealth(h.ts, h.role, h.health);
    for (const e of tick.events) w.appendEvent(e);
    for (const j of tick.journal) w.appendJournal(j);
  }
  await w.close();
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  v11 = join(dir, 'v11.pdrec.jsonl.gz');
  v12 = join(dir, 'v12.pdrec.jsonl.gz');
  v13 = join(dir, 'v13.pdrec.jsonl.gz');
  await writeSession(v11, false);
  await writeSession(v12, '1.2');
  await writeSession(v13, '1.3');
  full11 = await readRecording(v11);
  full12 = await readRecording(v12);
  full13 = await readRecording(v13);
}, 240_000);
afterAll(async () => {
  await cleanup();
});

const key = (s: { target: string; name: string; labels: Record<string, string> }): string =>
  `${s.target}|${s.name}|${JSON.stringify(s.labels)}`;

/** Every overview value is the full stream's value at the same time, exactly. */
function expectOverviewOf(ov: Recording, full: Recording): number {
  const byKey = new Map(full.series.map((s) => [key(s), s]));
  let checked = 0;
  for (const s of ov.series) {
    const f = byKey.get(key(s));
    expect(f, key(s)).toBeDefined();
    let j = 0;
    for (let i = 0; i < s.t.length; i++) {
      while (j < f!.t.length && f!.t[j] < s.t[i]) j++;
      expect(f!.t[j], `${key(s)} at ${s.t[i]}`).toBe(s.t[i]);
      if (!Object.is(f!.v[j], s.v[i])) throw new Error(`${key(s)} at ${s.t[i]}: ${s.v[i]} ≠ ${f!.v[j]}`);
      checked++;
    }
  }
  return checked;
}

/** Two readings of one session hold the same series, values, states, events and journal. */
function expectSameContent(a: Recording, b: Recording): void {
  expect(a.warnings).toEqual([]);
  expect(a.closedCleanly).toBe(true);
  expect(a.series.length).toBe(b.series.length);
  for (let i = 0; i < b.series.length; i++) {
    expect(key(a.series[i])).toBe(key(b.series[i]));
    expect(Array.from(a.series[i].t)).toEqual(Array.from(b.series[i].t));
    for (let k = 0; k < b.series[i].v.length; k++)
      if (!Object.is(a.series[i].v[k], b.series[i].v[k])) throw new Error(`${key(b.series[i])}[${k}]`);
  }
  expect(a.events).toEqual(b.events);
  expect(a.unitStates).toEqual(b.unitStates);
  expect(a.health).toEqual(b.health);
  expect(a.journal).toEqual(b.journal);
}

describe('format 1.2 round trip', () => {
  it('reads back exactly what format 1.1 reads back, with no warning, in several gzip members', async () => {
    expect(full12.header.minorVersion).toBe(2);
    expect(full12.header.overview).toEqual({ stepMs: STEP });
    expect(full11.header.minorVersion).toBe(1);
    expect(full12.warnings).toEqual([]);
    expect(full11.warnings).toEqual([]);
    expect(full12.closedCleanly).toBe(true);
    expect(full12.series.length).toBe(full11.series.length);
    for (let i = 0; i < full11.series.length; i++) {
      const a = full11.series[i];
      const b = full12.series[i];
      expect(key(b)).toBe(key(a));
      expect(Array.from(b.t)).toEqual(Array.from(a.t));
      for (let k = 0; k < a.v.length; k++) if (!Object.is(a.v[k], b.v[k])) throw new Error(`${key(a)}[${k}]`);
    }
    expect(full12.events).toEqual(full11.events);
    expect(full12.unitStates).toEqual(full11.unitStates);
    expect(full12.journal).toEqual(full11.journal);
    // 25 min: overview members after 10 and 20 min and at close, then the index.
    const marked = scanMarked(await readFile(v12)).map((m) => m.kind);
    expect(marked).toEqual(['overview', 'overview', 'overview', 'index']);
  });

  it('has no overview in a 1.1 file: the caller reads it the slow way', async () => {
    expect(await readOverview(v11)).toBeNull();
  });

  it('reads the overview from the index: every 15 s row of the review series, exactly as recorded', async () => {
    const ov = (await readOverview(v12))!;
    expect(ov.foundBy).toBe('index');
    expect(ov.members).toBe(3);
    expect(ov.bytesRead).toBeLessThan((await readFile(v12)).length / 4);
    const rec = ov.recording;
    expect(rec.warnings).toEqual([]);
    expect(rec.closedCleanly).toBe(true);
    expect(rec.firstTs).toBe(full12.firstTs);
    expect(rec.lastTs).toBe(full12.lastTs);
    expect(rec.series.every((s) => isReviewInput(s.name))).toBe(true);
    expect(new Set(rec.series.map(key))).toEqual(
      new Set(full12.series.filter((s) => isReviewInput(s.name)).map(key)),
    );
    // The prefill server ran throughout: one row every 15 s (the first scrape at least 15 s after the last).
    const prefill = rec.series.filter((s) => s.target === 'prefill');
    const decode = prefill.reduce((a, b) => (b.t.length > a.t.length ? b : a));
    expect(decode.t.length).toBeGreaterThanOrEqual(SECONDS / 16 - 1);
    expect(decode.t.length).toBeLessThanOrEqual(SECONDS / 15 + 2);
    for (let i = 1; i < decode.t.length - 1; i++)
      expect(decode.t[i] - decode.t[i - 1]).toBeGreaterThanOrEqual(STEP);
    // … and, at close, the target's last scrape: the overview ends where the session does.
    const fullPrefill = full12.series.find((s) => key(s) === key(decode))!;
    expect(decode.t[decode.t.length - 1]).toBe(fullPrefill.t[fullPrefill.t.length - 1]);
    expect(expectOverviewOf(rec, full12)).toBeGreaterThan(10_000);
    // Unit states, health and events are in the overview in full.
    expect(rec.events).toEqual(full12.events);
    expect(rec.unitStates).toEqual(full12.unitStates);
    expect(rec.health).toEqual(full12.health);
    expect(rec.journal).toEqual([]);
  });

  it('falls back to a scan, saying so, when the index is damaged', async () => {
    const p = join(dir, 'bad-index.pdrec.jsonl.gz');
    await copyFile(v12, p);
    const buf = await readFile(p);
    const index = scanMarked(buf).pop()!;
    const fh = await open(p, 'r+');
    // A byte inside the index's compressed data.
    const at = index.at + 30;
    await fh.write(Buffer.from([buf[at] ^ 0x55]), 0, 1, at);
    await fh.close();
    const ov = (await readOverview(p))!;
    expect(ov.foundBy).toBe('scan');
    expect(ov.recording.warnings).toHaveLength(1);
    expect(ov.recording.warnings[0]).toMatch(
      /^The recording's index at byte \d+ is damaged \(.+\); the overview was found by scanning the file instead\.$/,
    );
    expectOverviewOf(ov.recording, full12);
    expect(ov.recording.series.length).toBe((await readOverview(v12))!.recording.series.length);
  });

  it('shows the overview of a file cut short (a crash) up to its last overview member, and says so', async () => {
    const p = join(dir, 'cut.pdrec.jsonl.gz');
    await copyFile(v12, p);
    const marked = scanMarked(await readFile(p));
    // Cut inside the data after the second overview member: as a kill -9 leaves a file (no index, no end).
    const cutAt = marked[1].at + marked[1].length + 20_000;
    await truncate(p, cutAt);
    const ov = (await readOverview(p))!;
    expect(ov.foundBy).toBe('scan');
    expect(ov.members).toBe(2);
    expect(ov.recording.closedCleanly).toBe(false);
    expect(ov.recording.warnings).toEqual([
      `The recording has no index at its end (it was not closed, or it was cut short): its overview reaches ${new Date(ov.recording.lastTs).toISOString()}; the full detail, up to its last intact record, is read from the recording.`,
    ]);
    expect(ov.recording.lastTs).toBeGreaterThanOrEqual(START + 19 * 60_000);
    expectOverviewOf(ov.recording, full12);
    // The full read of the same cut file keeps everything up to the cut (it was flushed every 2 s).
    const rec = await readRecording(p);
    expect(rec.closedCleanly).toBe(false);
    expect(rec.warnings[0]).toMatch(/not closed/);
    expect(rec.lastTs).toBeGreaterThan(ov.recording.lastTs);
  });

  it('stops at a damaged overview member and says from when', async () => {
    const p = join(dir, 'bad-overview.pdrec.jsonl.gz');
    await copyFile(v12, p);
    const buf = await readFile(p);
    const second = scanMarked(buf)[1];
    const fh = await open(p, 'r+');
    const at = second.at + 40;
    await fh.write(Buffer.from([buf[at] ^ 0x10]), 0, 1, at);
    await fh.close();
    const ov = (await readOverview(p))!;
    expect(ov.recording.warnings.join(' ')).toMatch(
      /^The recording's overview at byte \d+ \(.+ to .+\) is damaged \(.+\): the overview ends at \d{4}-.+; the full detail is read from the recording\.$/,
    );
    expect(ov.damage).toMatchObject({ section: 'overview', at: second.at });
    expect(ov.recording.lastTs).toBeLessThan(ov.damage!.span![0]);
    expectOverviewOf(ov.recording, full12);
    // The data after it is not touched: the full read has all of it, and names the damaged member.
    const rec = await readRecording(p);
    expect(rec.closedCleanly).toBe(true);
    expect(rec.stats.scrapes).toBe(full12.stats.scrapes);
    expect(rec.derivedDamage.map((d) => [d.section, d.at])).toEqual([['overview', second.at]]);
  });
});

describe('review from the overview', () => {
  it('shows, at the overview rows, the values the full read shows (point signals exactly, windowed ones within 5 % nearly always)', async () => {
    const ov = overviewReviewData((await readOverview(v12))!.recording);
    const fullData = buildReviewData(full12);
    let compared = 0;
    let close = 0;
    for (const [group, g] of ov.table.groups) {
      const f = fullData.table.groups.get(group)!;
      for (const [k, col] of g.cols) {
        const fc = f.cols.get(k);
        expect(fc, k).toBeDefined();
        for (let i = 0; i < g.t.length; i++) {
          const row = fullData.table.rowAtOrBefore(group, g.t[i]);
          if (f.t[row] !== g.t[i]) continue;
          const a = col[i];
          const b = fc![row];
          if (Number.isNaN(a) && Number.isNaN(b)) continue;
          compared++;
          if (
            Math.abs(a - b) <= 0.05 * Math.max(Math.abs(b), 1e-9) ||
            (Number.isNaN(a) === Number.isNaN(b) && a === b)
          )
            close++;
        }
      }
    }
    expect(compared).toBeGreaterThan(5_000);
    // Windowed signals (rates, quantiles over 60 s) see 5 overview points instead of 61: nearly always the same.
    expect(close / compared).toBeGreaterThan(0.95);
    const point = ['decode.kv_ratio', 'decode.running', 'prefill.kv_ratio', 'decode.queued'];
    for (const k of point) {
      const g = ov.table.groups.get('decode')!;
      const col = ov.table.groups.get(k.split('.')[0])!.cols.get(k)!;
      const grp = ov.table.groups.get(k.split('.')[0])!;
      for (let i = 0; i < grp.t.length; i++) {
        const v = fullData.table.value(k, grp.t[i]);
        expect(Number.isNaN(col[i]) ? null : col[i], `${k} at ${grp.t[i]}`).toBe(v);
      }
      expect(g.t.length).toBeGreaterThan(0);
    }
  });

  it('opens a 1.2 file from its overview (saying that re-saving makes it faster), then the full detail takes its place', async () => {
    const loaded = await loadReview(v12, { fullDelayMs: 0 });
    expect(loaded.loadedFrom).toBe('overview');
    expect(loaded.detail).toBe('overview');
    expect(loaded.data.warnings).toEqual([ROWS_OVERVIEW_NOTE]);
    const rows = loaded.data.table.groups.get('decode')!.t.length;
    await loaded.full;
    expect(loaded.detail).toBe('full');
    expect(loaded.data.table.groups.get('decode')!.t.length).toBeGreaterThan(rows * 10);
    // The note stays when the full detail takes the overview's place.
    expect(loaded.data.warnings).toEqual([ROWS_OVERVIEW_NOTE]);
    expect((await loaded.journal).length).toBe(full12.journal.length);
  });

  it("opens a 1.3 file from the signals in its overview: every value at every overview row is the full read's", async () => {
    const ov = (await readOverview(v13))!;
    // No scrape rows: the first screen decodes and evaluates nothing.
    expect(ov.recording.series).toEqual([]);
    expect(ov.tables.length).toBe(ov.members);
    const data = tableReviewData(ov.recording, ov.tables as TableRecord[]);
    const fullData = buildReviewData(full13);
    let compared = 0;
    for (const [group, g] of fullData.table.groups) {
      const o = data.table.groups.get(group)!;
      expect(o, group).toBeDefined();
      expect([...o.cols.keys()].sort()).toEqual([...g.cols.keys()].sort());
      // One row at least STEP after the previous one (scrapes come about every second), the last row included.
      expect(o.t.length).toBeGreaterThanOrEqual(Math.floor((0.95 * SECONDS * 1000) / STEP));
      expect(o.t.length).toBeLessThanOrEqual(Math.ceil((SECONDS * 1000) / STEP) + 1);
      expect(o.t[o.t.length - 1]).toBe(g.t[g.t.length - 1]);
      for (const [k, col] of o.cols)
        for (let i = 0; i < o.t.length; i++) {
          const row = fullData.table.rowAtOrBefore(group, o.t[i]);
          expect(g.t[row]).toBe(o.t[i]);
          const a = col[i];
          const b = g.cols.get(k)![row];
          compared++;
          // The time-to-full regression sums from a different first row: the same fit, rounded differently.
          if (k.endsWith('.kv_ttf_s') && Number.isFinite(b))
            expect(Math.abs(a - b)).toBeLessThan(1e-3 * Math.abs(b));
          else if (!Object.is(a, b)) throw new Error(`${k} at ${o.t[i]}: overview ${a}, full read ${b}`);
        }
    }
    expect(compared).toBeGreaterThan(10_000);
    expect(data.notExposed).toEqual(fullData.notExposed);
    expect(data.lastScrapeTs).toBe(fullData.lastScrapeTs);
    for (const role of ['prefill', 'decode'] as const)
      expect(data.kv.get(role)!.metas).toEqual(fullData.kv.get(role)!.metas);
    const loaded = await loadReview(v13, { fullDelayMs: 0 });
    expect(loaded.loadedFrom).toBe('overview');
    expect(loaded.data.warnings).toEqual([]);
    await loaded.full;
    expect(loaded.detail).toBe('full');
  });

  it('writes a 1.3 file no larger than the 1.2 file of the same session', async () => {
    expect(full13.header.minorVersion).toBe(3);
    expect(full13.header.overview).toEqual({ stepMs: STEP, signals: true });
    const [a, b] = await Promise.all([readFile(v12), readFile(v13)]);
    expect(b.length).toBeLessThanOrEqual(a.length);
    expectSameContent(full13, full12);
  });

  it('reads a file killed before much of it had an overview in full, events and all', async () => {
    const p = join(dir, 'killed-early.pdrec.jsonl.gz');
    await copyFile(v12, p);
    const marked = scanMarked(await readFile(p));
    // Killed just before the 20-minute overview member: half of the file has no overview.
    await truncate(p, marked[1].at - 1000);
    expect((await readOverview(p))!.uncoveredBytes).toBeGreaterThan(marked[1].at / 3);
    const loaded = await loadReview(p);
    expect(loaded.loadedFrom).toBe('recording');
    const rec = await readRecording(p);
    expect(loaded.data.events).toEqual(rec.events);
    expect(loaded.data.lastTs).toBe(rec.lastTs);
  });

  it('opens a 1.1 file the slow way, with the one-line note that re-saving makes it fast', async () => {
    const loaded = await loadReview(v11);
    expect(loaded.loadedFrom).toBe('recording');
    expect(loaded.detail).toBe('full');
    expect(loaded.data.warnings).toEqual([SLOW_FORMAT_NOTE]);
    expect(SLOW_FORMAT_NOTE).toBe(
      'recorded in format 1.1: opens the slow way; re-save it (pd-console recording resave FILE) to open it at once',
    );
  });
});

describe('re-saving a 1.1 file (pd-console recording resave FILE)', () => {
  it('rewrites it as 1.3 with the same content; a review then opens it from the overview', async () => {
    const p = join(dir, 'resave.pdrec.jsonl.gz');
    await copyFile(v11, p);
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['recording', 'resave', p], {
      stdout: (s) => out.push(s),
      stderr: (s) => err.push(s),
      readStdin: async () => '',
    });
    expect(err.join('')).toBe('');
    expect(code).toBe(0);
    expect(out.join('')).toMatch(
      /re-saved from format 1\.1 to 1\.3 \(\d+ scrapes; .+\); a review now opens it at once/,
    );
    const again = await readRecording(p);
    expect(again.header.minorVersion).toBe(3);
    expect(again.warnings).toEqual([]);
    expect(again.closedCleanly).toBe(true);
    expect(again.header.sessionId).toBe(full11.header.sessionId);
    const byKey = new Map(full11.series.map((s) => [key(s), s]));
    expect(again.series.length).toBe(full11.series.length);
    for (const s of again.series) {
      const f = byKey.get(key(s))!;
      expect(Array.from(s.t)).toEqual(Array.from(f.t));
      for (let k = 0; k < f.v.length; k++) if (!Object.is(f.v[k], s.v[k])) throw new Error(`${key(s)}[${k}]`);
    }
    expect(again.events).toEqual(full11.events);
    expect(again.unitStates).toEqual(full11.unitStates);
    expect(again.health).toEqual(full11.health);
    expect(again.journal).toEqual(full11.journal);
    const loaded = await loadReview(p, { fullDelayMs: 0 });
    expect(loaded.loadedFrom).toBe('overview');
    expect(loaded.data.warnings).toEqual([]);
    expect((await readOverview(p))!.tables.length).toBeGreaterThan(0);
    await loaded.full;
    // Re-saving evaluates every overview segment as the recorder does: tens of seconds on a loaded machine.
  }, 180_000);

  it('re-saves a file whose overview alone is damaged, which rebuilds it; refuses one whose data is', async () => {
    const p = join(dir, 'resave-damaged-overview.pdrec.jsonl.gz');
    await copyFile(v12, p);
    const buf = await readFile(p);
    const second = scanMarked(buf)[1];
    const fh = await open(p, 'r+');
    await fh.write(Buffer.from([buf[second.at + 40] ^ 0xff]), 0, 1, second.at + 40);
    await fh.close();
    const out: string[] = [];
    const code = await runCli(['recording', 'resave', p], {
      stdout: (s) => out.push(s),
      stderr: (s) => out.push(s),
      readStdin: async () => '',
    });
    expect(code).toBe(0);
    expect(out.join('')).toMatch(
      new RegExp(
        `\\nthe recording's overview at byte ${second.at} \\(.+\\) is damaged \\(.+\\): rebuilt from the data\\n$`,
      ),
    );
    const again = await readRecording(p);
    expect(again.warnings).toEqual([]);
    expect(again.stats.scrapes).toBe(full12.stats.scrapes);
    const ov = (await readOverview(p))!;
    expect([ov.foundBy, ov.members, ov.damage, ov.recording.warnings]).toEqual(['index', 3, null, []]);

    // Damage in the data: what a re-saved copy would drop is refused, as for a file cut short.
    const d = join(dir, 'resave-damaged-data.pdrec.jsonl.gz');
    await copyFile(v12, d);
    const dh = await open(d, 'r+');
    const at = Math.floor(second.at / 2);
    await dh.write(Buffer.from([buf[at] ^ 0xff]), 0, 1, at);
    await dh.close();
    await expect(resaveRecording(d)).rejects.toThrow(/is not re-saved: The recording is damaged/);
  }, 180_000);

  it('refuses a file cut short, which a re-saved copy would make look complete', async () => {
    const p = join(dir, 'resave-cut.pdrec.jsonl.gz');
    await copyFile(v11, p);
    const size = (await readFile(p)).length;
    await truncate(p, Math.floor(size / 2));
    await expect(resaveRecording(p)).rejects.toThrow(
      /is not re-saved: The recording was not closed .* A re-saved copy would look complete and hide that; open it as it is\./,
    );
    expect((await readFile(p)).length).toBe(Math.floor(size / 2));
  });
});

describe('the sessions list', () => {
  it('says of a 1.1 or 1.2 session, in one line, that it opens the slow way and how to make it fast', async () => {
    const folder = join(dir, 'sessions');
    await mkdir(folder);
    await copyFile(v11, join(folder, '20260105-080000Z-aaaaaa.pdrec.jsonl.gz'));
    await copyFile(v12, join(folder, '20260105-090000Z-bbbbbb.pdrec.jsonl.gz'));
    await copyFile(v13, join(folder, '20260105-100000Z-cccccc.pdrec.jsonl.gz'));
    const store = new SessionStore(folder);
    const byId = new Map((await store.list()).map((s) => [s.id, s]));
    expect(byId.get('20260105-080000Z-aaaaaa')!.warnings).toEqual([SLOW_FORMAT_NOTE]);
    expect(byId.get('20260105-090000Z-bbbbbb')!.warnings).toEqual([ROWS_OVERVIEW_NOTE]);
    expect(byId.get('20260105-100000Z-cccccc')!.warnings).toEqual([]);
    // From the cached summary too.
    expect((await store.info('20260105-080000Z-aaaaaa')).warnings).toEqual([SLOW_FORMAT_NOTE]);
  });
});
