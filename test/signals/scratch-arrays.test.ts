// The live push evaluates into scratch arrays that the next scrape's evaluation uses again. Checked here: the
// push equals an evaluation into new arrays at every scrape (stale values in a reused array would show), what an
// evaluation outside the scratch scope returns (review, charts) is never written by a later live push, a
// reused array comes back filled as asked, and the shelves hold no more than one evaluation needs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import type { Exposition } from '../../src/main/core/probes/exposition/types';
import { evaluateTarget, isSignalInput } from '../../src/main/core/signals/evaluate';
import { workersAt } from '../../src/main/core/signals/evaluate/router-workers';
import { LiveColumns } from '../../src/main/core/signals/live-columns';
import { timeToFull } from '../../src/main/core/signals/evaluate/time-to-full';
import { SignalsStore } from '../../src/main/core/signals/signals-store';
import {
  f64,
  i32,
  scratchArraysHeld,
  u8,
  withScratchArrays,
} from '../../src/main/core/signals/scratch-arrays';
import type { Role } from '../../src/shared/domain';

const FIXTURES = join(__dirname, '..', 'sglang', 'fixtures');
const START = Date.UTC(2026, 0, 5, 8);

/**
 * Scrape s of a fixture: every sample moved on by s × a per-line step (cumulative buckets stay cumulative, as
 * each bucket of a histogram gets the same step), and every 9th scrape without the lines matching `drop`.
 */
function scrapeOf(text: string, s: number, drop: RegExp): Exposition {
  const lines = text.split('\n').filter((l) => s % 9 !== 4 || l.startsWith('#') || !drop.test(l));
  const moved = lines.map((l) => {
    if (l.startsWith('#') || l.trim() === '') return l;
    const m = /^(.*\S)\s+(\S+)$/.exec(l);
    if (!m) return l;
    const v = Number(m[2]);
    if (!Number.isFinite(v)) return l;
    const step = l.includes('_bucket') || l.includes('_count') ? 3 : l.includes('_sum') ? 0.25 : 1 + (s % 4);
    return `${m[1]} ${v + s * step}`;
  });
  return parseExposition(moved.join('\n'), 'prometheus');
}

const TARGETS: { role: Role; file: string; drop: RegExp }[] = [
  { role: 'decode', file: 'decode-newest.prom', drop: /_bucket\{.*le="0\.1"/ },
  { role: 'router', file: 'router-smg.prom', drop: /worker/ },
];

function session(n: number): { ts: number; role: Role; exp: Exposition }[] {
  const texts = TARGETS.map((t) => readFileSync(join(FIXTURES, t.file), 'utf8'));
  const out: { ts: number; role: Role; exp: Exposition }[] = [];
  for (let s = 0; s < n; s++)
    TARGETS.forEach((t, k) =>
      out.push({ ts: START + s * 1000, role: t.role, exp: scrapeOf(texts[k], s, t.drop) }),
    );
  return out;
}

describe('scratch arrays of the live push', () => {
  it('push the same values as an evaluation into new arrays, at every scrape', () => {
    const store = new SignalsStore();
    store.open('d', ['router', 'decode']);
    const reference = new Map<Role, LiveColumns>();
    let compared = 0;
    for (const { ts, role, exp } of session(150)) {
      const pushed = store.ingest('d', ts, role, exp);
      let live = reference.get(role);
      if (!live) reference.set(role, (live = new LiveColumns({ keepMs: 60_000, track: isSignalInput })));
      live.append(ts, exp);
      const cols = live.columns(role);
      const last = cols.rows - 1;
      const sig = evaluateTarget(cols, role, { rateWindowMs: 60_000, from: last, kv: false });
      for (const [key, col] of sig.values) {
        const v = col[last];
        expect(pushed[`${role}.${key}`], `${role}.${key} at ${ts - START} ms`).toBe(v === v ? v : null);
        compared++;
      }
      if (role === 'router')
        expect(store.routerWorkers('d')).toEqual(
          sig.workers ? workersAt(sig.workers, last - (sig.workersFrom ?? 0)) : [],
        );
    }
    // Rates, quantiles and the workers gave values: the comparison was not of gaps only.
    const latest = store.latest('d');
    for (const key of ['decode.generation_tokens_per_s', 'decode.itl_p50_s', 'router.router_requests_per_s'])
      expect(typeof latest[key], key).toBe('number');
    expect(store.routerWorkers('d')?.length).toBeGreaterThan(0);
    expect(compared).toBeGreaterThan(1000);
  });

  it('never write into what an evaluation outside them returned', () => {
    const store = new SignalsStore();
    store.open('d', ['router', 'decode']);
    // Past the first minute, so the kept columns have as many rows as the live push's (arrays of that length
    // are the ones the shelves hand out again).
    const scrapes = session(110);
    const live = new LiveColumns({ keepMs: 60_000, track: isSignalInput });
    for (const x of scrapes.slice(0, 200)) {
      store.ingest('d', x.ts, x.role, x.exp);
      if (x.role === 'decode') live.append(x.ts, x.exp);
    }
    // A chart's or review's evaluation: every row, kept by its caller.
    const kept = evaluateTarget(live.columns('decode'), 'decode', { rateWindowMs: 60_000 });
    const copy = new Map([...kept.values].map(([k, col]) => [k, Float64Array.from(col)]));
    for (const x of scrapes.slice(200)) store.ingest('d', x.ts, x.role, x.exp);
    expect(kept.values.get('generation_tokens_per_s')?.length).toBe(live.rows);
    for (const [k, col] of kept.values) expect(Array.from(col), k).toEqual(Array.from(copy.get(k)!));
  });

  it('come back filled as asked, each array once per evaluation', () => {
    const first = withScratchArrays(() => {
      const a = f64(8, NaN);
      const b = f64(8, NaN);
      expect(a).not.toBe(b);
      a.fill(5);
      b.fill(6);
      u8(8).fill(9);
      i32(8, -1).fill(7);
      return [a, b];
    });
    withScratchArrays(() => {
      const a = f64(8, NaN);
      const b = f64(8);
      // The same arrays again (nothing allocated), filled as this call asks, not as the last one left them.
      expect([a, b]).toEqual(expect.arrayContaining([first[0], first[1]]));
      expect(Array.from(a).every((v) => Number.isNaN(v))).toBe(true);
      expect(Array.from(b)).toEqual(new Array(8).fill(0));
      expect(Array.from(u8(8))).toEqual(new Array(8).fill(0));
      expect(Array.from(i32(8, -1))).toEqual(new Array(8).fill(-1));
    });
    // Outside a scope every call is a new array.
    expect(f64(8)).not.toBe(f64(8));
  });

  it('hold no more than one evaluation needs, however long the session', () => {
    const store = new SignalsStore();
    store.open('d', ['router', 'decode']);
    const scrapes = session(300);
    for (const x of scrapes.slice(0, 200)) store.ingest('d', x.ts, x.role, x.exp);
    const held = scratchArraysHeld();
    for (const x of scrapes.slice(200)) store.ingest('d', x.ts, x.role, x.exp);
    expect(held).toBeGreaterThan(0);
    expect(scratchArraysHeld()).toBeLessThanOrEqual(held * 1.5);
  });

  it('an evaluation taking fewer arrays of a length, or none, leaves the next one the same arrays', () => {
    // The targets take turns (a server, the router, the other server): the router's lighter evaluation must
    // not make the next server's allocate its arrays again.
    const server = (): Float64Array[] => withScratchArrays(() => [f64(7), f64(7), f64(7)]);
    const first = server();
    withScratchArrays(() => f64(7));
    withScratchArrays(() => f64(8));
    const again = server();
    expect(again.map((a, k) => a === first[k])).toEqual([true, true, true]);
  });

  it('forecast KV time to full as the forecast over new arrays of the last 5 minutes does', () => {
    const store = new SignalsStore({ capacity: 400 });
    store.open('d', ['decode']);
    const t: number[] = [];
    const ratio: number[] = [];
    let forecasts = 0;
    // Rising, a gap (no scrape: no KV) now and then, falling, rising again; past the ring's capacity so it wraps.
    // Gaps are minutes apart: the forecast needs 2 min of data after the last gap.
    for (let s = 0; s < 900; s++) {
      const ts = START + s * 1000;
      const up = s < 300 || s >= 500;
      const r = s % 397 === 50 ? null : up ? 0.3 + (s % 300) * 0.002 : 0.9 - (s - 300) * 0.001;
      const pushed = store.ingestObservation({
        deploymentId: 'd',
        hostId: 'h',
        ts,
        services: [
          {
            role: 'decode',
            unit: 'u',
            metrics:
              r === null
                ? { ok: false, at: ts, error: 'no answer' }
                : { ok: true, scrapedAt: ts, durationMs: 1, families: 1, samples: 1 },
            ...(r === null
              ? {}
              : {
                  kv: {
                    usedTokens: r * 1e6,
                    capacityTokens: 1e6,
                    ratio: r,
                    source: 'kv_tokens',
                    sourceMetrics: [],
                  },
                }),
          },
        ],
      });
      t.push(ts);
      // The ring keeps float32 ratios.
      ratio.push(r === null ? NaN : Math.fround(r));
      const from = t.findIndex((x) => x >= ts - 5 * 60_000);
      const want = timeToFull(t.slice(from), ratio.slice(from), 5 * 60_000).at(-1)!;
      expect(pushed['decode.kv_ttf_s'], `at ${s} s`).toBe(want === want ? want : null);
      if (want === want) forecasts++;
    }
    console.log(`[scratch] ${forecasts} of 900 rows forecast`);
    expect(forecasts).toBeGreaterThan(150);
  });
});
