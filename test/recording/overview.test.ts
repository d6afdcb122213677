// The overview: the same session written with and without one reads back to the same values; the overview is
// found from the index (or, when the index is missing or damaged, by a scan that says so), and a file cut short
// still shows its overview up to the cut. A review opened from the overview (the signals evaluated as the session
// was written) shows exactly the full read's values at its rows. A file of an older format minor is read by its
// data with a one-line note, and `pd-console recording resave` rewrites it in the one format written, same content.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFile, mkdir, open, readFile, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { RecordingWriter, readRecording, type Recording } from '../../src/main/core/recording';
import { readOverview } from '../../src/main/core/recording/overview-reader';
import { scanMarked } from '../../src/main/core/recording/members';
import { buildReviewData } from '../../src/main/core/review/review-data';
import { loadReview } from '../../src/main/core/review/load-review';
import {
  REVIEW_OVERVIEW,
  tableReviewData,
  type TableRecord,
} from '../../src/main/core/review/overview-table';
import { FORMAT_MINOR_VERSION, OLD_FORMAT_NOTE } from '../../src/main/core/recording/format';
import { resaveRecording } from '../../src/main/core/recording/resave';
import { SessionStore } from '../../src/main/core/recording/session-store';
import { runCli } from '../../src/main/cli/main';
import { SyntheticPdSession } from '../support/synthetic-pd-session';
import { asOlderMinor, manualClock, ONE_HOST, oneHostHeader, tempDir } from './helpers';

const START = Date.UTC(2026, 0, 5, 8);
const SECONDS = 25 * 60;
const STEP = 15_000;

let dir: string;
let cleanup: () => Promise<void>;
/** The session in an older format minor (1.1: no overview, one gzip member). */
let v11: string;
/** The session as written now, with its overview. */
let v14: string;
let full11: Recording;
let full14: Recording;

async function writeSession(path: string, overview: boolean): Promise<void> {
  const sim = new SyntheticPdSession(START, 5, SECONDS * 1000);
  const clock = manualClock(START);
  const w = await RecordingWriter.open(path, oneHostHeader({ startedAt: START }), {
    clock,
    overview: overview && { ...REVIEW_OVERVIEW, stepMs: STEP },
  });
  const { source } = ONE_HOST;
  for (let i = 0; i < SECONDS; i++) {
    const tick = sim.step();
    clock.set(sim.now);
    for (const s of tick.scrapes) w.appendScrape(s.ts, source(s.target), s.exp);
    for (const u of tick.unitStates) w.appendUnitState(u.ts, source(u.role), u.state);
    for (const h of tick.health) w.appendHealth(h.ts, source(h.role), h.health);
    for (const e of tick.events) w.appendEvent(e);
    for (const j of tick.journal) w.appendJournal({ ...j, role: source(j.role) });
  }
  await w.close();
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  v11 = join(dir, 'v11.pdrec.jsonl.gz');
  v14 = join(dir, 'v14.pdrec.jsonl.gz');
  await writeSession(v11, false);
  await asOlderMinor(v11, 1);
  await writeSession(v14, true);
  full11 = await readRecording(v11);
  full14 = await readRecording(v14);
}, 240_000);
afterAll(async () => {
  await cleanup();
});

const key = (s: { target: string; name: string; labels: Record<string, string> }): string =>
  `${s.target}|${s.name}|${JSON.stringify(s.labels)}`;

/** The overview's signal rows, one `o.tbl` record per member: as many as a full read of the same file gives. */
function tablesOf(ov: { tables: unknown[]; members: number }): number {
  expect(ov.tables.length).toBe(ov.members);
  return ov.tables.length;
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

describe('the overview round trip', () => {
  it('reads back exactly what a file without overview reads back, with no warning, in several gzip members', async () => {
    expect(full14.header.minorVersion).toBe(FORMAT_MINOR_VERSION);
    expect(full14.header.overview).toEqual({ stepMs: STEP, signals: true });
    expect(full11.header.minorVersion).toBe(1);
    expect(full11.warnings).toEqual([]);
    expectSameContent(full14, full11);
    // 25 min: overview members after 10 and 20 min and at close, then the index.
    const marked = scanMarked(await readFile(v14)).map((m) => m.kind);
    expect(marked).toEqual(['overview', 'overview', 'overview', 'index']);
  });

  it('has no overview in a file of an older minor: the caller reads its data', async () => {
    expect(await readOverview(v11)).toBeNull();
  });

  it('reads the overview from the index: the signal rows of every member, and every state and event', async () => {
    const ov = (await readOverview(v14))!;
    expect(ov.foundBy).toBe('index');
    expect(ov.members).toBe(3);
    expect(tablesOf(ov)).toBe(3);
    expect(ov.bytesRead).toBeLessThan((await readFile(v14)).length / 4);
    const rec = ov.recording;
    expect(rec.warnings).toEqual([]);
    expect(rec.closedCleanly).toBe(true);
    expect(rec.firstTs).toBe(full14.firstTs);
    expect(rec.lastTs).toBe(full14.lastTs);
    // No scrape rows: the first screen decodes and evaluates nothing.
    expect(rec.series).toEqual([]);
    // Unit states, health and events are in the overview in full.
    expect(rec.events).toEqual(full14.events);
    expect(rec.unitStates).toEqual(full14.unitStates);
    expect(rec.health).toEqual(full14.health);
    expect(rec.journal).toEqual([]);
  });

  it('falls back to a scan, saying so, when the index is damaged', async () => {
    const p = join(dir, 'bad-index.pdrec.jsonl.gz');
    await copyFile(v14, p);
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
    expect(ov.tables).toEqual((await readOverview(v14))!.tables);
    expect(ov.recording.events).toEqual(full14.events);
  });

  it('shows the overview of a file cut short (a crash) up to its last overview member, and says so', async () => {
    const p = join(dir, 'cut.pdrec.jsonl.gz');
    await copyFile(v14, p);
    const marked = scanMarked(await readFile(p));
    // Cut inside the data after the second overview member: as a kill -9 leaves a file (no index, no end).
    const cutAt = marked[1].at + marked[1].length + 20_000;
    await truncate(p, cutAt);
    const ov = (await readOverview(p))!;
    expect(ov.foundBy).toBe('scan');
    expect(ov.members).toBe(2);
    expect(tablesOf(ov)).toBe(2);
    expect(ov.recording.closedCleanly).toBe(false);
    expect(ov.recording.warnings).toEqual([
      `The recording has no index at its end (it was not closed, or it was cut short): its overview reaches ${new Date(ov.recording.lastTs).toISOString()}; the full detail, up to its last intact record, is read from the recording.`,
    ]);
    expect(ov.recording.lastTs).toBeGreaterThanOrEqual(START + 19 * 60_000);
    expect(ov.tables).toEqual((await readOverview(v14))!.tables.slice(0, 2));
    // The full read of the same cut file keeps everything up to the cut (it was flushed every 2 s).
    const rec = await readRecording(p);
    expect(rec.closedCleanly).toBe(false);
    expect(rec.warnings[0]).toMatch(/not closed/);
    expect(rec.lastTs).toBeGreaterThan(ov.recording.lastTs);
  });

  it('stops at a damaged overview member and says from when', async () => {
    const p = join(dir, 'bad-overview.pdrec.jsonl.gz');
    await copyFile(v14, p);
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
    expect(ov.tables).toEqual((await readOverview(v14))!.tables.slice(0, 1));
    // The data after it is not touched: the full read has all of it, and names the damaged member.
    const rec = await readRecording(p);
    expect(rec.closedCleanly).toBe(true);
    expect(rec.stats.scrapes).toBe(full14.stats.scrapes);
    expect(rec.derivedDamage.map((d) => [d.section, d.at])).toEqual([['overview', second.at]]);
  });
});

describe('review from the overview', () => {
  it("opens a file from the signals in its overview: every value at every overview row is the full read's", async () => {
    const ov = (await readOverview(v14))!;
    const data = tableReviewData(ov.recording, ov.tables as TableRecord[]);
    const fullData = buildReviewData(full14);
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
    const loaded = await loadReview(v14, { fullDelayMs: 0 });
    expect(loaded.loadedFrom).toBe('overview');
    expect(loaded.data.warnings).toEqual([]);
    await loaded.full;
    expect(loaded.detail).toBe('full');
  });

  it('reads a file killed before much of it had an overview in full, events and all', async () => {
    const p = join(dir, 'killed-early.pdrec.jsonl.gz');
    await copyFile(v14, p);
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

  it('opens a file of an older minor by its data, with the one-line note that re-saving makes it fast', async () => {
    const loaded = await loadReview(v11);
    expect(loaded.loadedFrom).toBe('recording');
    expect(loaded.detail).toBe('full');
    expect(loaded.data.warnings).toEqual([OLD_FORMAT_NOTE]);
    expect(OLD_FORMAT_NOTE).toBe(
      'recorded in an older format: opens the slow way; re-save it (pd-console recording resave FILE) to open it at once',
    );
  });
});

describe('re-saving a file of an older minor (pd-console recording resave FILE)', () => {
  it('rewrites it in the one format written with the same content; a review then opens it from the overview, showing what the old file showed', async () => {
    const p = join(dir, 'resave.pdrec.jsonl.gz');
    await copyFile(v11, p);
    const before = await loadReview(p);
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
      new RegExp(
        `re-saved from format 1\\.1 to 1\\.${FORMAT_MINOR_VERSION} \\(\\d+ scrapes; .+\\); a review now opens it at once`,
      ),
    );
    const again = await readRecording(p);
    expect(again.header.minorVersion).toBe(FORMAT_MINOR_VERSION);
    expect(again.header.sessionId).toBe(full11.header.sessionId);
    expectSameContent(again, full11);
    const loaded = await loadReview(p, { fullDelayMs: 0 });
    expect(loaded.loadedFrom).toBe('overview');
    expect(loaded.data.warnings).toEqual([]);
    expect((await readOverview(p))!.tables.length).toBeGreaterThan(0);
    await loaded.full;
    // The full detail of the re-saved file is what the old file showed, signal for signal.
    expect(before.data.warnings).toEqual([OLD_FORMAT_NOTE]);
    expect(loaded.data.roles).toEqual(before.data.roles);
    expect(loaded.data.notExposed).toEqual(before.data.notExposed);
    expect(loaded.data.events).toEqual(before.data.events);
    for (const [group, g] of before.data.table.groups) {
      const a = loaded.data.table.groups.get(group)!;
      expect(Array.from(a.t), group).toEqual(Array.from(g.t));
      expect([...a.cols.keys()].sort()).toEqual([...g.cols.keys()].sort());
      for (const [k, col] of g.cols)
        for (let i = 0; i < col.length; i++)
          if (!Object.is(a.cols.get(k)![i], col[i])) throw new Error(`${k}[${i}]`);
    }
    // Re-saving evaluates every overview segment as the recorder does: tens of seconds on a loaded machine.
  }, 180_000);

  it('re-saves a file whose overview alone is damaged, which rebuilds it; refuses one whose data is', async () => {
    const p = join(dir, 'resave-damaged-overview.pdrec.jsonl.gz');
    await copyFile(v14, p);
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
    expect(again.stats.scrapes).toBe(full14.stats.scrapes);
    const ov = (await readOverview(p))!;
    expect([ov.foundBy, ov.members, ov.damage, ov.recording.warnings]).toEqual(['index', 3, null, []]);

    // Damage in the data: what a re-saved copy would drop is refused, as for a file cut short.
    const d = join(dir, 'resave-damaged-data.pdrec.jsonl.gz');
    await copyFile(v14, d);
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
  it('says of a session of an older minor, in one line, that it opens the slow way and how to make it fast', async () => {
    const folder = join(dir, 'sessions');
    await mkdir(folder);
    await copyFile(v11, join(folder, '20260105-080000Z-aaaaaa.pdrec.jsonl.gz'));
    await copyFile(v14, join(folder, '20260105-100000Z-cccccc.pdrec.jsonl.gz'));
    const store = new SessionStore(folder);
    const byId = new Map((await store.list()).map((s) => [s.id, s]));
    expect(byId.get('20260105-080000Z-aaaaaa')!.warnings).toEqual([OLD_FORMAT_NOTE]);
    expect(byId.get('20260105-100000Z-cccccc')!.warnings).toEqual([]);
    // From the cached summary too.
    expect((await store.info('20260105-080000Z-aaaaaa')).warnings).toEqual([OLD_FORMAT_NOTE]);
  });
});
