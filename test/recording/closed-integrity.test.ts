// Damage to a recording that was closed properly (format 1.3: data members, an overview member every 10 minutes,
// the last overview member and the index after the end record). The overview and the index only make opening
// fast: damage there must cost none of the data, and is named with its byte offset; damage in the data opens
// everything before it with the last intact time; a file cut after its end record says so. One byte is flipped
// at a time — every byte of each derived member's gzip header and trailer, a dense sample of the rest of them and
// of the data — and each open is classified; then the file is cut at every section boundary.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  RecordingOpenError,
  RecordingWriter,
  readRecording,
  type Recording,
} from '../../src/main/core/recording';
import { readOverview, type OverviewRead } from '../../src/main/core/recording/overview-reader';
import { scanMarked } from '../../src/main/core/recording/members';
import { REVIEW_OVERVIEW } from '../../src/main/core/review/overview-table';
import { SyntheticPdSession } from '../support/synthetic-pd-session';
import { manualClock, ONE_HOST, oneHostHeader, tempDir } from './helpers';

const START = Date.UTC(2026, 0, 5, 8);
/** 21 minutes: overview members after 10 and 20 minutes and at close. */
const SECONDS = 21 * 60;
/** A scrape every 15 s keeps the file small (~150 KiB) so that a thousand opens fit in a test. */
const SCRAPE_EVERY = 15;

let dir: string;
let cleanup: () => Promise<void>;
let path: string;
let bytes: Buffer;
/** Bytes of the header's block (the gzip header and the header line with its seal): damage there refuses. */
let headerEnd: number;
let base: Recording;
let baseOverview: string;
/** [start, end) of every gzip member, and its kind. */
let sections: { kind: 'data' | 'overview' | 'index'; at: number; end: number }[];

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('pdc-closed-integrity-'));
  path = join(dir, 'closed.pdrec.jsonl.gz');
  const sim = new SyntheticPdSession(START, 5, SECONDS * 1000);
  const clock = manualClock(START);
  const w = await RecordingWriter.open(path, oneHostHeader({ startedAt: START }), {
    clock,
    overview: { ...REVIEW_OVERVIEW, stepMs: 30_000 },
  });
  headerEnd = (await stat(path)).size;
  const { source } = ONE_HOST;
  for (let i = 0; i < SECONDS; i++) {
    const tick = sim.step();
    clock.set(sim.now);
    if (i % SCRAPE_EVERY === 0) for (const s of tick.scrapes) w.appendScrape(s.ts, source(s.target), s.exp);
    for (const u of tick.unitStates) w.appendUnitState(u.ts, source(u.role), u.state);
    for (const h of tick.health) w.appendHealth(h.ts, source(h.role), h.health);
    for (const e of tick.events) w.appendEvent(e);
    for (const j of tick.journal) w.appendJournal({ ...j, role: source(j.role) });
    if (i % 2 === 1) await w.flush();
  }
  await w.close();
  bytes = await readFile(path);
  base = await readRecording(path);
  baseOverview = overviewContent((await readOverview(path))!);
  sections = [];
  let at = 0;
  for (const m of scanMarked(bytes)) {
    if (m.at > at) sections.push({ kind: 'data', at, end: m.at });
    sections.push({ kind: m.kind, at: m.at, end: m.at + m.length });
    at = m.at + m.length;
  }
}, 120_000);
afterAll(async () => {
  await cleanup();
});

const seriesKey = (s: Recording['series'][number]): string =>
  `${s.target}|${s.name}|${JSON.stringify(s.labels)}`;

interface Whole {
  series: Map<string, Recording['series'][number]>;
  /** Each kind of record of the intact file, as its JSON text with how often it occurs. */
  records: Record<'journal' | 'events' | 'unit states' | 'health', Map<string, number>>;
}

/** What `notAPrefix` compares against, built once per intact recording (it is the same one for every open). */
const wholes = new WeakMap<Recording, Whole>();
function wholeOf(r: Recording): Whole {
  let w = wholes.get(r);
  if (!w) {
    const count = (xs: readonly unknown[]): Map<string, number> => {
      const m = new Map<string, number>();
      for (const x of xs) m.set(JSON.stringify(x), (m.get(JSON.stringify(x)) ?? 0) + 1);
      return m;
    };
    w = {
      series: new Map(r.series.map((s) => [seriesKey(s), s])),
      records: {
        journal: count(r.journal),
        events: count(r.events),
        'unit states': count(r.unitStates),
        health: count(r.health),
      },
    };
    wholes.set(r, w);
  }
  return w;
}

/** Each opened recording is compared with the intact one once; the answer is asked for up to three times. */
const prefixAnswers = new WeakMap<Recording, string | null>();

/** Why `part` is not the start of `whole`, value for value; null when it is. */
function notAPrefix(part: Recording, whole: Recording): string | null {
  if (whole === base && prefixAnswers.has(part)) return prefixAnswers.get(part)!;
  const answer = comparePrefix(part, whole);
  if (whole === base) prefixAnswers.set(part, answer);
  return answer;
}

function comparePrefix(part: Recording, whole: Recording): string | null {
  if (JSON.stringify(part.header) !== JSON.stringify(whole.header)) return 'header differs';
  const w = wholeOf(whole);
  for (const s of part.series) {
    const f = w.series.get(seriesKey(s));
    if (!f) return `series ${seriesKey(s)} is not in the intact file`;
    if (s.v.length > f.v.length) return `${s.name} has more values than the intact file`;
    for (let i = 0; i < s.v.length; i++)
      if (s.t[i] !== f.t[i] || !Object.is(s.v[i], f.v[i])) return `${s.name}[${i}] differs`;
  }
  // Sorted by time, the records read before damage are not always the first ones of the sorted whole (journal
  // lines of a tick may be stamped before the previous tick's): each must be one of the intact file's.
  for (const [what, a] of [
    ['journal', part.journal],
    ['events', part.events],
    ['unit states', part.unitStates],
    ['health', part.health],
  ] as const) {
    const intact = w.records[what];
    const used = new Map<string, number>();
    for (const x of a) {
      const k = JSON.stringify(x);
      const n = used.get(k) ?? 0;
      if (n >= (intact.get(k) ?? 0)) return `${what} differ: ${k.slice(0, 120)} is not in the intact file`;
      used.set(k, n + 1);
    }
  }
  return null;
}

function identical(a: Recording, b: Recording): boolean {
  return (
    notAPrefix(a, b) === null &&
    a.series.length === b.series.length &&
    a.series.every((s, i) => s.v.length === b.series[i].v.length) &&
    a.journal.length === b.journal.length &&
    a.events.length === b.events.length &&
    a.unitStates.length === b.unitStates.length &&
    a.health.length === b.health.length &&
    a.lastTs === b.lastTs
  );
}

/** What a review's first screen is drawn from: the signal rows, events, states and span. */
function overviewContent(o: OverviewRead): string {
  const r = o.recording;
  return JSON.stringify([o.tables, r.events, r.unitStates, r.health, r.firstTs, r.lastTs]);
}

const ISO_TIME = /\d{4}-\d\d-\d\dT[\d:.]+Z/;

type FullClass =
  'full, damage named' | 'partial, last intact time named' | 'refused' | 'unchanged' | 'silent';

/** How an open of the file as it is now turned out, and why it is silent when it is. */
async function classifyFull(
  p: string,
): Promise<{ cls: FullClass; rec?: Recording; err?: Error; why?: string }> {
  let rec: Recording;
  try {
    rec = await readRecording(p);
  } catch (err) {
    if (!(err instanceof RecordingOpenError)) throw err;
    return { cls: 'refused', err };
  }
  if (rec.warnings.length === 0)
    return identical(rec, base)
      ? { cls: 'unchanged', rec }
      : { cls: 'silent', rec, why: `${notAPrefix(rec, base) ?? 'fewer records'}, no warning` };
  const changed = notAPrefix(rec, base);
  if (changed) return { cls: 'silent', rec, why: `warned, but what is shown changed: ${changed}` };
  if (identical(rec, base) && rec.closedCleanly) {
    // Everything is there: what is damaged must be said with where it is.
    const named =
      (rec.derivedDamage ?? []).length > 0 && rec.warnings.every((w) => /at byte \d+|past byte \d+/.test(w));
    return named
      ? { cls: 'full, damage named', rec }
      : { cls: 'silent', rec, why: `complete, but the damage is not located: ${rec.warnings.join(' | ')}` };
  }
  return rec.warnings.some((w) => ISO_TIME.test(w)) && !rec.closedCleanly
    ? { cls: 'partial, last intact time named', rec }
    : { cls: 'silent', rec, why: `partial without the last intact time: ${rec.warnings.join(' | ')}` };
}

type OverviewClass = 'same' | 'damage named' | 'refused' | 'silent';

async function classifyOverview(p: string): Promise<OverviewClass> {
  let o: OverviewRead | null;
  try {
    o = await readOverview(p);
  } catch (err) {
    if (!(err instanceof RecordingOpenError)) throw err;
    return 'refused';
  }
  if (!o) return 'silent';
  if (o.recording.warnings.length)
    return o.recording.warnings.every((w) => /byte \d+|no index/.test(w)) ? 'damage named' : 'silent';
  return overviewContent(o) === baseOverview ? 'same' : 'silent';
}

function sectionOf(p: number): { kind: 'data' | 'overview' | 'index'; at: number; end: number } {
  return sections.find((s) => p >= s.at && p < s.end)!;
}

describe('a closed recording', () => {
  it('has data members, three overview members and an index, and opens whole without a warning', () => {
    expect(sections.map((s) => s.kind)).toEqual([
      'data',
      'overview',
      'data',
      'overview',
      'data',
      'overview',
      'index',
    ]);
    expect(base.closedCleanly).toBe(true);
    expect(base.warnings).toEqual([]);
    expect(base.journal.length).toBeGreaterThan(100);
    expect(headerEnd).toBeGreaterThan(100);
  });

  it('with one byte flipped anywhere: the overview or index damaged costs no data and is named; data damage shows what is before it; nothing changes silently', async () => {
    const positions: number[] = [];
    for (const s of sections) {
      // Every byte of each member's gzip header and trailer (in a derived member, also its 24-byte marker)…
      const head = s.kind === 'data' ? 10 : 24;
      for (let p = s.at; p < Math.min(s.end, s.at + head); p++) positions.push(p);
      for (let p = Math.max(s.at + head, s.end - 8); p < s.end; p++) positions.push(p);
      // … and the bytes between: a dense sample of derived members, a spread over the data.
      const step = s.kind === 'data' ? 509 : 23;
      for (let p = s.at + head + 5; p < s.end - 8; p += step) positions.push(p);
    }
    const out = join(dir, 'flipped.pdrec.jsonl.gz');
    const counts: Record<string, number> = {};
    const bad: string[] = [];
    const note = (k: string): void => void (counts[k] = (counts[k] ?? 0) + 1);
    for (let i = 0; i < positions.length; i++) {
      const p = positions[i];
      const mask = i % 2 ? 0x20 : 0xff;
      const copy = Buffer.from(bytes);
      copy[p] ^= mask;
      await writeFile(out, copy);
      const sec = sectionOf(p);
      const where = p < headerEnd ? 'header' : sec.kind === 'data' ? 'data' : 'derived';
      const full = await classifyFull(out);
      const ov = await classifyOverview(out);
      note(`${where}: ${full.cls}`);
      note(`${where}: overview ${ov}`);
      const at = `byte ${p} (${sec.kind} member at ${sec.at}) ^ 0x${mask.toString(16)}`;
      if (full.cls === 'silent') bad.push(`${at}: ${full.why}`);
      if (ov === 'silent') bad.push(`${at}: the overview changed without a word`);
      if (full.cls === 'refused' && where !== 'header') bad.push(`${at}: refused: ${full.err?.message}`);
      // A derived member is either named where it is, or was not changed at all (a flip deflate ignores).
      const harmless = full.cls === 'unchanged' && ov === 'same';
      if (where === 'derived' && full.cls !== 'full, damage named' && !harmless)
        bad.push(`${at}: damage to the ${sec.kind} cost data or was not named (${full.cls}, overview ${ov})`);
      if (where === 'derived' && !harmless && !(full.rec?.derivedDamage ?? []).some((d) => d.at === sec.at))
        bad.push(`${at}: not located at its member: ${full.rec?.warnings.join(' | ')}`);
    }
    console.log(
      `[closed integrity] ${positions.length} single-byte flips of a ${bytes.length}-byte closed recording ` +
        `(header block ${headerEnd} B): ${JSON.stringify(counts, null, 1)}`,
    );
    expect(bad).toEqual([]);
    expect(counts['derived: full, damage named']).toBeGreaterThan(500);
    expect(counts['data: partial, last intact time named']).toBeGreaterThan(200);
  }, 600_000);

  it('cut at every section boundary: never opens as complete without a word', async () => {
    const cuts = new Set<number>([headerEnd]);
    for (const s of sections) {
      const len = s.end - s.at;
      for (const c of [
        s.at,
        s.at + 1,
        s.at + 10,
        s.at + 24,
        s.at + Math.floor(len / 2),
        s.end - 8,
        s.end - 1,
      ])
        if (c > 0 && c < bytes.length) cuts.add(c);
    }
    const out = join(dir, 'cut.pdrec.jsonl.gz');
    const counts: Record<string, number> = {};
    const bad: string[] = [];
    for (const c of [...cuts].sort((a, b) => a - b)) {
      await writeFile(out, bytes.subarray(0, c));
      const sec = sectionOf(c);
      const full = await classifyFull(out);
      const ov = await classifyOverview(out);
      counts[full.cls] = (counts[full.cls] ?? 0) + 1;
      const at = `cut at ${c} (${sec.kind} member at ${sec.at})`;
      if (full.cls === 'silent' || full.cls === 'unchanged') bad.push(`${at}: ${full.cls} ${full.why ?? ''}`);
      if (ov === 'silent' || ov === 'same')
        bad.push(`${at}: the overview read says nothing of the cut (${ov})`);
      // After the end record all of the data is there: the cut is named as such.
      const afterEnd = c >= sections[sections.length - 3].end;
      if (afterEnd && full.cls !== 'full, damage named')
        bad.push(`${at}: after the end record, but ${full.cls}`);
      if (afterEnd && !full.rec?.warnings.join(' ').match(/cut short/))
        bad.push(`${at}: does not say it was cut short: ${full.rec?.warnings.join(' | ')}`);
    }
    console.log(`[closed integrity] ${cuts.size} cuts at section boundaries: ${JSON.stringify(counts)}`);
    expect(bad).toEqual([]);
  }, 300_000);
});
