// Writing then reading a recording gives back exactly what was appended: every value (NaN, ±Inf, -0, full
// floats, huge integers), every timestamp, series that appear, vanish and come back, label order changes,
// histogram resets; and only changes of unit state and health.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { join } from 'node:path';
import { RecordingWriter, readRecording, type Recording } from '../../src/main/core/recording';
import type { UnitState } from '../../src/shared/domain';
import { SyntheticPdSession } from '../support/synthetic-pd-session';
import { exposition, header, histogram, manualClock, seriesKey, tempDir, type FamilySpec } from './helpers';

let dir: string;
let cleanup: () => Promise<void>;
let n = 0;
const nextPath = (): string => join(dir, `r${n++}.pdrec.jsonl.gz`);

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterAll(async () => {
  await cleanup();
});

function byKey(rec: Recording): Map<string, { t: number[]; v: number[] }> {
  const m = new Map<string, { t: number[]; v: number[] }>();
  for (const s of rec.series) m.set(seriesKey(s.target, s.name, s.labels), { t: [...s.t], v: [...s.v] });
  return m;
}

function expectSameValues(actual: number[], expected: number[], what: string): void {
  expect(actual.length, what).toBe(expected.length);
  for (let i = 0; i < expected.length; i++)
    if (!Object.is(actual[i], expected[i]))
      throw new Error(`${what}[${i}]: got ${actual[i]}, expected ${expected[i]}`);
}

const anyValue = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.integer({ min: 0, max: 100_000 }).map((x) => x / 100),
  fc.integer({ min: 0, max: 1_000_000 }).map((x) => x / 1e6),
  fc.double(),
  fc.maxSafeInteger(),
  fc.constantFrom(
    NaN,
    Infinity,
    -Infinity,
    -0,
    0,
    2 ** 53,
    -(2 ** 53),
    1e21,
    5e-324,
    0.1,
    0.30000000000000004,
    1e-7,
  ),
);

const scrapeArb = fc.record({
  target: fc.constantFrom('prefill', 'gpu-2/decode'),
  dt: fc.oneof(fc.integer({ min: 1, max: 2000 }), fc.constantFrom(0, -3)),
  present: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
  gauges: fc.array(anyValue, { minLength: 5, maxLength: 5 }),
  withHisto: fc.boolean(),
  incr: fc.array(fc.nat(5), { minLength: 4, maxLength: 4 }),
  reset: fc.boolean().map((b) => b && Math.random() < 0.2),
  sumAdd: fc.double({ min: 0, max: 100, noNaN: true }),
  reorder: fc.boolean(),
  duplicate: fc.boolean(),
});

// Generous timeouts: these run simulations, and CI machines are small and shared.
describe('round trip', { timeout: 120_000 }, () => {
  it('returns every appended value and timestamp exactly (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(scrapeArb, { minLength: 1, maxLength: 60 }), async (scrapes) => {
        const path = nextPath();
        const w = await RecordingWriter.open(path, header(), { clock: manualClock(0) });
        const expected = new Map<string, { t: number[]; v: number[] }>();
        const lastTs = new Map<string, number>();
        const cum = new Map<string, number[]>();
        const sums = new Map<string, number>();
        let ts = Date.UTC(2026, 0, 5, 8);
        for (const s of scrapes) {
          ts += s.dt;
          const fams: FamilySpec[] = [];
          const gaugeSamples: [string, Record<string, string>, number][] = [];
          for (let i = 0; i < 5; i++) {
            if (!s.present[i]) continue;
            const labels = s.reorder ? { z: 'x', k: `v${i}` } : { k: `v${i}`, z: 'x' };
            gaugeSamples.push([`g${i}`, labels, s.gauges[i]]);
          }
          for (const [name, labels, value] of gaugeSamples)
            fams.push({ name, type: 'gauge', samples: [[name, labels, value]] });
          if (s.duplicate && gaugeSamples.length)
            fams.push({
              name: gaugeSamples[0][0],
              type: 'gauge',
              samples: [[gaugeSamples[0][0], gaugeSamples[0][1], 12345]],
            });
          if (s.withHisto) {
            const c = s.reset ? [0, 0, 0, 0] : (cum.get(s.target) ?? [0, 0, 0, 0]);
            const next = c.map((x, i) => x + s.incr[i]);
            cum.set(s.target, next);
            const sum = (s.reset ? 0 : (sums.get(s.target) ?? 0)) + s.sumAdd;
            sums.set(s.target, sum);
            fams.push({
              name: 'lat',
              type: 'histogram',
              samples: histogram('lat', { route: '/x' }, [0.1, 1, 10], next, sum),
            });
          }
          const exp = exposition(fams);
          w.appendScrape(ts, s.target, exp);
          const last = lastTs.get(s.target) ?? -Infinity;
          if (!(ts > last)) continue;
          lastTs.set(s.target, ts);
          const seen = new Set<string>();
          for (const f of exp.families)
            for (const smp of f.samples) {
              const key = seriesKey(s.target, smp.name, smp.labels);
              if (seen.has(key)) continue;
              seen.add(key);
              let e = expected.get(key);
              if (!e) expected.set(key, (e = { t: [], v: [] }));
              e.t.push(ts);
              e.v.push(smp.value);
            }
        }
        await w.close();
        const rec = await readRecording(path);
        expect(rec.warnings).toEqual([]);
        expect(rec.closedCleanly).toBe(true);
        const got = byKey(rec);
        expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
        for (const [key, e] of expected) {
          const g = got.get(key)!;
          expectSameValues(g.t, e.t, `${key} t`);
          expectSameValues(g.v, e.v, `${key} v`);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('reproduces a realistic 10-minute PD session sample for sample', async () => {
    const path = nextPath();
    const start = Date.UTC(2026, 0, 5, 8);
    const sim = new SyntheticPdSession(start, 7, 600_000);
    const clock = manualClock(start);
    const w = await RecordingWriter.open(path, header({ startedAt: start }), { clock });
    const expected = new Map<string, { t: number[]; v: number[] }>();
    for (let i = 0; i < 600; i++) {
      const tick = sim.step();
      clock.set(sim.now);
      for (const s of tick.scrapes) {
        w.appendScrape(s.ts, s.target, s.exp);
        for (const f of s.exp.families)
          for (const smp of f.samples) {
            const key = seriesKey(s.target, smp.name, smp.labels);
            let e = expected.get(key);
            if (!e) expected.set(key, (e = { t: [], v: [] }));
            e.t.push(s.ts);
            e.v.push(smp.value);
          }
      }
    }
    await w.close();
    const rec = await readRecording(path);
    expect(rec.warnings).toEqual([]);
    const got = byKey(rec);
    expect(got.size).toBe(expected.size);
    expect(got.size).toBeGreaterThan(800);
    for (const [key, e] of expected) {
      const g = got.get(key);
      expect(g, key).toBeDefined();
      expectSameValues(g!.t, e.t, `${key} t`);
      expectSameValues(g!.v, e.v, `${key} v`);
    }
  });

  it('grows the dictionary mid-session and keeps series metadata', async () => {
    const path = nextPath();
    const w = await RecordingWriter.open(path, header(), { clock: manualClock(0) });
    const t0 = Date.UTC(2026, 0, 5, 9);
    const base: FamilySpec = {
      name: 'sglang:num_running_reqs',
      type: 'gauge',
      help: 'running',
      samples: [['sglang:num_running_reqs', { tp_rank: '0' }, 3]],
    };
    w.appendScrape(t0, 'decode', exposition([base]));
    // A new label value and a new family arrive later (lazy series, like a first 503 at the router).
    w.appendScrape(
      t0 + 1000,
      'decode',
      exposition([
        { ...base, samples: [...base.samples, ['sglang:num_running_reqs', { tp_rank: '1' }, 4]] },
        {
          name: 'smg_http_responses_total',
          type: 'counter',
          help: 'responses',
          samples: [['smg_http_responses_total', { status_code: '503' }, 1]],
        },
      ]),
    );
    w.appendScrape(t0 + 2000, 'decode', exposition([base]));
    await w.close();
    const rec = await readRecording(path);
    const s = (name: string, tp?: string) =>
      rec.series.find((x) => x.name === name && (tp === undefined || x.labels.tp_rank === tp))!;
    expect([...s('sglang:num_running_reqs', '0').t]).toEqual([t0, t0 + 1000, t0 + 2000]);
    expect([...s('sglang:num_running_reqs', '1').t]).toEqual([t0 + 1000]);
    expect([...s('sglang:num_running_reqs', '1').v]).toEqual([4]);
    const c = s('smg_http_responses_total');
    expect(c.type).toBe('counter');
    expect(c.help).toBe('responses');
    expect(c.family).toBe('smg_http_responses_total');
    expect(c.target).toBe('decode');
  });

  it('reads back a target with more series than one scrape’s first buffers hold, as they come and go', async () => {
    const path = nextPath();
    const w = await RecordingWriter.open(path, header(), { clock: manualClock(0) });
    const t0 = Date.UTC(2026, 0, 5, 9);
    // 600 series, then 2,500 (the encoder's buffers start at 1,024), then 600 again, each value its own.
    const sizes = [600, 2500, 2500, 600];
    const value = (k: number, i: number): number => (i % 3 === 0 ? k * 7 + i : (k + 1) * 0.125 + i / 1000);
    sizes.forEach((n, k) =>
      w.appendScrape(
        t0 + k * 1000,
        'decode',
        exposition([
          {
            name: 'sglang:wide',
            type: 'gauge',
            help: 'one series per slot',
            samples: Array.from({ length: n }, (_, i) => ['sglang:wide', { slot: String(i) }, value(k, i)]),
          },
        ]),
      ),
    );
    await w.close();
    const rec = await readRecording(path);
    expect(rec.series).toHaveLength(2500);
    for (const i of [0, 1, 599, 600, 1023, 1024, 2047, 2048, 2499]) {
      const s = rec.series.find((x) => x.labels.slot === String(i))!;
      const at = sizes.flatMap((n, k) => (i < n ? [k] : []));
      expect([...s.t], `slot ${i}`).toEqual(at.map((k) => t0 + k * 1000));
      expect([...s.v], `slot ${i}`).toEqual(at.map((k) => value(k, i)));
    }
  });

  it('stores unit state and health only when they change', async () => {
    const path = nextPath();
    const w = await RecordingWriter.open(path, header(), { clock: manualClock(0) });
    const t0 = Date.UTC(2026, 0, 5, 10);
    const unit: UnitState = {
      unit: 'sglang-decode.service',
      loadState: 'loaded',
      activeState: 'active',
      subState: 'running',
      mainPid: 42,
      nRestarts: 0,
      activeEnterTimestamp: t0 - 1000,
      result: 'success',
      memoryCurrentBytes: 1000,
    };
    for (let i = 0; i < 10; i++)
      w.appendUnitState(t0 + i * 1000, 'decode', { ...unit, memoryCurrentBytes: 1000 + i });
    w.appendUnitState(t0 + 61_000, 'decode', { ...unit, memoryCurrentBytes: 5000 }); // memory only, a minute later
    w.appendUnitState(t0 + 62_000, 'decode', {
      ...unit,
      activeState: 'activating',
      subState: 'start',
      mainPid: 43,
    });
    w.appendUnitState(t0 + 63_000, 'prefill', { ...unit, unit: 'sglang-prefill.service' });
    for (let i = 0; i < 10; i++)
      w.appendHealth(t0 + i * 1000, 'decode', {
        ok: true,
        status: 200,
        detail: '200 OK',
        checkedAt: t0 + i * 1000,
      });
    w.appendHealth(t0 + 20_000, 'decode', {
      ok: false,
      detail: 'connection refused',
      checkedAt: t0 + 20_000,
    });
    w.appendHealth(t0 + 21_000, 'decode', {
      ok: false,
      detail: 'connection refused',
      checkedAt: t0 + 21_000,
    });
    w.appendEvent({
      id: 'e1',
      ts: t0 + 5,
      kind: 'alert',
      severity: 'error',
      role: 'decode',
      title: 'decode down',
      detail: 'exit 1',
    });
    w.appendJournal({
      ts: t0 + 7,
      role: 'decode',
      unit: 'sglang-decode.service',
      priority: 3,
      message: 'CUDA error: out of memory',
    });
    await w.close();
    const rec = await readRecording(path);
    expect(
      rec.unitStates.map((u) => [u.ts - t0, u.source, u.state.activeState, u.state.memoryCurrentBytes]),
    ).toEqual([
      [0, 'decode', 'active', 1000],
      [61_000, 'decode', 'active', 5000],
      [62_000, 'decode', 'activating', 1000],
      [63_000, 'prefill', 'active', 1000],
    ]);
    expect(rec.health.map((h) => [h.ts - t0, h.health.ok, h.health.detail])).toEqual([
      [0, true, '200 OK'],
      [20_000, false, 'connection refused'],
    ]);
    expect(rec.events).toEqual([
      {
        id: 'e1',
        ts: t0 + 5,
        kind: 'alert',
        severity: 'error',
        role: 'decode',
        title: 'decode down',
        detail: 'exit 1',
      },
    ]);
    expect(rec.journal).toEqual([
      {
        ts: t0 + 7,
        role: 'decode',
        unit: 'sglang-decode.service',
        priority: 3,
        message: 'CUDA error: out of memory',
      },
    ]);
  });

  it('filters series and time on open, and shares the time column between series of a target', async () => {
    const path = nextPath();
    const w = await RecordingWriter.open(path, header(), { clock: manualClock(0) });
    const t0 = Date.UTC(2026, 0, 5, 11);
    for (let i = 0; i < 100; i++)
      w.appendScrape(
        t0 + i * 1000,
        'decode',
        exposition([
          { name: 'a', type: 'gauge', samples: [['a', {}, i]] },
          { name: 'b', type: 'gauge', samples: [['b', {}, i * 2]] },
        ]),
      );
    await w.close();
    const rec = await readRecording(path, {
      series: (s) => s.name === 'b',
      fromMs: t0 + 10_000,
      toMs: t0 + 19_000,
    });
    expect(rec.series.map((s) => s.name)).toEqual(['b']);
    expect([...rec.series[0].v]).toEqual([20, 22, 24, 26, 28, 30, 32, 34, 36, 38]);
    const all = await readRecording(path);
    expect(all.series[0].t.buffer).toBe(all.series[1].t.buffer);
  });

  it('drops a scrape whose time is not after the previous one of the same target, and counts it', async () => {
    const path = nextPath();
    const w = await RecordingWriter.open(path, header(), { clock: manualClock(0) });
    const e = exposition([{ name: 'a', type: 'gauge', samples: [['a', {}, 1]] }]);
    w.appendScrape(2000, 'decode', e);
    w.appendScrape(1000, 'decode', e);
    w.appendScrape(1000, 'router', e);
    expect(w.stats.outOfOrderDropped).toBe(1);
    await w.close();
    const rec = await readRecording(path);
    expect(rec.series.map((s) => [s.target, [...s.t]])).toEqual([
      ['decode', [2000]],
      ['router', [1000]],
    ]);
  });

  it('refuses appends after close and flush intervals a crash could not honour', async () => {
    const w = await RecordingWriter.open(nextPath(), header());
    await w.close();
    expect(() => w.appendEvent({ id: 'x', ts: 1, kind: 'info', severity: 'info', title: 'x' })).toThrow(
      /closed/,
    );
    await expect(RecordingWriter.open(nextPath(), header(), { flushIntervalMs: 10_000 })).rejects.toThrow(
      /crash loses/,
    );
    const p = nextPath();
    await (await RecordingWriter.open(p, header())).close();
    await expect(RecordingWriter.open(p, header())).rejects.toThrow(/Cannot create recording/);
  });
});
