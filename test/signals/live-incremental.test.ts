// The live push keeps state between scrapes so that a scrape costs O(its series): running increases per series,
// the bucket plan of each histogram, the newest row's own columns, shared views of point times, window edges
// found by bisection. Each is checked here where it could go stale — a counter reset inside the window, bucket
// series appearing and disappearing, a series missing from some scrapes, a gauge missing from the newest one, a
// gap longer than the window — against two evaluations that keep no state: fresh columns of exactly the
// window's scrapes built at every scrape, and review's one pass over all rows (whose edges step point by point).
import { describe, expect, it } from 'vitest';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import type { Exposition } from '../../src/main/core/probes/exposition/types';
import { evaluateTarget, isSignalInput } from '../../src/main/core/signals/evaluate';
import { LiveColumns } from '../../src/main/core/signals/live-columns';
import { TargetColumns } from '../../src/main/core/review/target-columns';
import { windowSum } from '../../src/main/core/signals/window-math';
import { SGLANG } from '../../src/shared/signals/metric-names';

const WINDOW_MS = 60_000;
const START = Date.UTC(2026, 0, 5, 8);

interface Scrape {
  t: number;
  exp: Exposition;
}

/**
 * A decode server's scrapes, 1 s apart: one counter that resets at 100 s, an ITL histogram that gains the
 * bound 0.5 at 40 s and loses 0.05 at 130 s, a prompt counter missing from every 7th scrape, the running
 * gauge missing from every 5th, and no scrapes at all from 200 s to 290 s.
 */
function session(): Scrape[] {
  const out: Scrape[] = [];
  let generated = 0;
  let prompt = 0;
  const buckets = new Map<string, number>();
  for (let s = 0; s < 330; s++) {
    if (s >= 200 && s < 290) continue;
    const t = START + s * 1000;
    generated = s === 100 ? 7 : generated + 40 + (s % 13);
    prompt += 100 + (s % 5);
    const les = ['0.01', '0.05', '0.1', '+Inf']
      .concat(s >= 40 ? ['0.5'] : [])
      .filter((le) => !(s >= 130 && le === '0.05'))
      .sort((a, b) => Number(a.replace('+Inf', 'Infinity')) - Number(b.replace('+Inf', 'Infinity')));
    const lines = [`# TYPE ${SGLANG.itl} histogram`];
    for (const le of les) {
      const bound = Number(le.replace('+Inf', 'Infinity'));
      const add =
        bound === Infinity ? 8 : bound >= 0.5 ? 7 : bound >= 0.1 ? 6 : bound >= 0.05 ? 3 + (s % 3) : 1;
      const v = (buckets.get(le) ?? 0) + add;
      buckets.set(le, v);
      lines.push(`${SGLANG.itl}_bucket{le="${le}"} ${v}`);
    }
    lines.push(`${SGLANG.itl}_count ${buckets.get('+Inf')}`, `${SGLANG.itl}_sum ${s / 10}`);
    lines.push(
      `# TYPE ${SGLANG.generationTokensTotal} counter`,
      `${SGLANG.generationTokensTotal} ${generated}`,
    );
    if (s % 7 !== 3)
      lines.push(`# TYPE ${SGLANG.promptTokensTotal} counter`, `${SGLANG.promptTokensTotal} ${prompt}`);
    if (s % 5 !== 4) lines.push(`# TYPE ${SGLANG.runningReqs} gauge`, `${SGLANG.runningReqs} ${s % 11}`);
    out.push({ t, exp: parseExposition(lines.join('\n') + '\n', 'prometheus') });
  }
  return out;
}

/** Columns of `scrapes` built from scratch, every series with its own rows: nothing shared with the live side. */
function freshColumns(scrapes: readonly Scrape[]): TargetColumns {
  const cols = new TargetColumns(
    'decode',
    Float64Array.from(scrapes, (s) => s.t),
  );
  const series = new Map<
    string,
    { name: string; labels: Record<string, string>; rows: number[]; v: number[] }
  >();
  scrapes.forEach(({ exp }, row) => {
    for (const fam of exp.families)
      for (const s of fam.samples) {
        if (!Number.isFinite(s.value) || !isSignalInput(s.name)) continue;
        const key = `${s.name}${JSON.stringify(Object.entries(s.labels).sort())}`;
        let x = series.get(key);
        if (!x) series.set(key, (x = { name: s.name, labels: { ...s.labels }, rows: [], v: [] }));
        x.rows.push(row);
        x.v.push(s.value);
      }
  });
  for (const x of series.values())
    cols.add({
      name: x.name,
      labels: x.labels,
      rows: Int32Array.from(x.rows),
      row0: 0,
      v: Float64Array.from(x.v),
    });
  return cols;
}

const same = (a: number, b: number): boolean =>
  Number.isNaN(a) ? Number.isNaN(b) : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a));

describe('the live push’s state between scrapes', () => {
  const scrapes = session();
  const live = new LiveColumns({ keepMs: WINDOW_MS, track: isSignalInput });
  const review = evaluateTarget(freshColumns(scrapes), 'decode', { rateWindowMs: WINDOW_MS, kv: false });
  const pushed: Map<string, Float64Array>[] = [];
  const fresh: Map<string, Float64Array>[] = [];
  for (let i = 0; i < scrapes.length; i++) {
    live.append(scrapes[i].t, scrapes[i].exp);
    const cols = live.columns('decode');
    const last = cols.rows - 1;
    pushed.push(
      new Map(
        [...evaluateTarget(cols, 'decode', { rateWindowMs: WINDOW_MS, from: last, kv: false }).values].map(
          ([k, col]) => [k, col.subarray(last)],
        ),
      ),
    );
    const inWindow = scrapes.slice(0, i + 1).filter((s) => s.t >= scrapes[i].t - WINDOW_MS);
    const f = evaluateTarget(freshColumns(inWindow), 'decode', { rateWindowMs: WINDOW_MS, kv: false });
    fresh.push(new Map([...f.values].map(([k, col]) => [k, col.subarray(col.length - 1)])));
  }

  it('gives at every scrape what fresh columns of the window and review give', () => {
    const mismatches: string[] = [];
    let numbers = 0;
    for (let i = 0; i < scrapes.length; i++)
      for (const [key, col] of pushed[i]) {
        const got = col[0];
        const want = [fresh[i].get(key)![0], review.values.get(key)![i]];
        if (!same(got, want[0]) || !same(got, want[1]))
          mismatches.push(
            `${(scrapes[i].t - START) / 1000} s ${key}: live ${got}, fresh ${want[0]}, review ${want[1]}`,
          );
        if (!Number.isNaN(got)) numbers++;
      }
    expect(mismatches.slice(0, 20)).toEqual([]);
    expect(numbers).toBeGreaterThan(scrapes.length * 4);
  });

  const at = (s: number, key: string): number => {
    const i = scrapes.findIndex((x) => x.t === START + s * 1000);
    return pushed[i].get(key)![0];
  };

  it('reads a counter reset inside the window as a restart from zero, not a negative rate', () => {
    // Around the reset (at 100 s) the window holds points from both sides: increases of 40…52 per second,
    // and the 7 counted from zero at the reset.
    for (const s of [100, 101, 130, 159]) {
      const r = at(s, 'generation_tokens_per_s');
      expect(r, `rate at ${s} s`).toBeGreaterThan(30);
      expect(r, `rate at ${s} s`).toBeLessThan(55);
    }
  });

  it('follows bucket series that appear and disappear', () => {
    // Two observations a second lie above 0.1: before the 0.5 bound exists p99 is read at the highest finite
    // bound, 0.1; once 0.5 has a window of its own, at 0.5. 0.05 goes at 130 s and the quantiles still read.
    expect(at(30, 'itl_p99_s')).toBeCloseTo(0.1, 12);
    expect(at(120, 'itl_p99_s')).toBeCloseTo(0.5, 12);
    expect(Number.isNaN(at(195, 'itl_p50_s'))).toBe(false);
  });

  it('drops a gauge the newest scrape lacks, and has no window after a gap longer than it', () => {
    expect(Number.isNaN(at(9, 'running'))).toBe(true);
    expect(at(10, 'running')).toBe(10);
    // First scrape after 90 s without any: one point per series, no rate, no quantile.
    expect(Number.isNaN(at(290, 'generation_tokens_per_s'))).toBe(true);
    expect(Number.isNaN(at(290, 'itl_p99_s'))).toBe(true);
    expect(at(291, 'generation_tokens_per_s')).toBeGreaterThan(30);
  });
});

describe('the live columns’ shared views of point times', () => {
  it('are shared only by series over the same rows, not by series of the same length', () => {
    // m{s="a"} is scraped at 1–3 s and m{s="b"} at 4–6 s: at 6 s both hold three points, over other rows.
    const live = new LiveColumns({ keepMs: 10_000, track: () => true });
    const text = (lines: string[]): Exposition => parseExposition(lines.join('\n') + '\n', 'prometheus');
    for (const s of [1, 2, 3]) live.append(s * 1000, text([`m_total{s="a"} ${s}`]));
    for (const s of [4, 5, 6]) live.append(s * 1000, text([`m_total{s="b"} ${(s - 3) * 10}`]));
    const cols = live.columns('t');
    // Over [2.5 s, 6 s] a has one point (no rate) and b three: 20 more in 2 s.
    const r = windowSum(cols, 'm_total', 3500, { rate: true, from: cols.rows - 1 });
    expect(r[cols.rows - 1]).toBe(10);
  });
});
