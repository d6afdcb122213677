// The walking skeleton's integration test: the real core, over real SSH (ssh2 client → the demo host's ssh2
// server), against the demo's simulated services. Values the app reports are compared with the simulation's
// ground truth, not with numbers written here.
import { afterEach, describe, expect, it } from 'vitest';
import type { Core } from '../../src/main/core/core';
import { DashboardService } from '../../src/main/core/services/dashboard';
import { SignalsStore } from '../../src/main/core/signals/signals-store';
import type { DemoHostOptions } from '../../src/main/demo';
import type { Observation } from '../../src/shared/domain';
import { nextObservation, openDemoCore, serviceOf as svc, type DemoCore } from '../support/demo-core';

let opened: DemoCore | undefined;

afterEach(async () => {
  await opened?.stop();
  opened = undefined;
});

async function openDemo(opts: DemoHostOptions = {}, attach?: (core: Core) => void): Promise<DemoCore> {
  opened = await openDemoCore({ seed: 7, intervalMs: 250, demo: opts, attach });
  return opened;
}

const observation = (c: Core, pred: (o: Observation) => boolean, timeoutMs = 15_000): Promise<Observation> =>
  nextObservation(c, pred, timeoutMs);

const complete = (o: Observation): boolean =>
  o.services.every((s) => s.systemd) &&
  !!svc(o, 'decode').kv &&
  !!svc(o, 'prefill').kv &&
  !!svc(o, 'decode').health;

describe('core against the demo host over SSH', () => {
  it('reports the three units as systemd has them and KV usage equal to the simulation', async () => {
    const { core: c, demo: d } = await openDemo();
    // The simulation moves on between the scrape and the observation (more so on a loaded machine), so the
    // reported ratio is checked against the simulation's own values over the time the poll could have taken.
    const truthKv: number[] = [];
    const since = Date.now();
    const sampler = setInterval(() => {
      const kv = d.sim.kvTruth('decode');
      if (kv) truthKv.push(kv.ratio);
    }, 20);
    // An observation a second after sampling began: one from the first rounds can carry a scrape taken before
    // the first sample (the core starts polling as the demo opens), which no sample would cover.
    const o = await observation(c, (x) => x.ts >= since + 1000 && complete(x)).finally(() =>
      clearInterval(sampler),
    );
    const truth = d.sim.snapshot();
    for (const role of ['prefill', 'decode', 'router'] as const) {
      const s = svc(o, role).systemd!;
      expect(s.unit).toBe(`sglang-${role}.service`);
      expect(s.activeState).toBe(truth.units[role].activeState);
      expect(s.subState).toBe(truth.units[role].subState);
      expect(s.mainPid).toBe(truth.units[role].mainPid);
    }
    const kv = svc(o, 'decode').kv!;
    expect(kv.source).toBe('kv_tokens');
    expect(kv.capacityTokens).toBe(2_580_000);
    const recent = truthKv.slice(-150);
    expect(kv.ratio).toBeGreaterThanOrEqual(Math.min(...recent) - 0.002);
    expect(kv.ratio).toBeLessThanOrEqual(Math.max(...recent) + 0.002);
    // …a span the simulation's load keeps narrow: the check would catch another pool's or a rank's ratio.
    expect(Math.max(...recent) - Math.min(...recent)).toBeLessThan(0.1);
    expect(kv.usedTokens).toBeGreaterThan(0);
    expect(svc(o, 'decode').health?.ok).toBe(true);
    expect(svc(o, 'router').metrics?.ok).toBe(true);
  });

  it('falls back through the KV metric eras and says which source it used', async () => {
    const { core: c } = await openDemo({ era: 'E1' });
    const o = await observation(c, (x) => !!svc(x, 'decode').kv);
    const kv = svc(o, 'decode').kv!;
    // No max_total_num_tokens gauge in this era: capacity comes from /get_server_info.
    expect(['num_used_tokens', 'token_usage']).toContain(kv.source);
    expect(kv.capacityTokens).toBe(2_580_000);
    expect(kv.sourceMetrics.join(' ')).toMatch(/server_info|num_used_tokens|token_usage/);
  });

  it('with 2 dp ranks the headline KV ratio is the summed pool, as in the simulation, and the fullest rank is named', async () => {
    const { core: c, demo: d } = await openDemo({ dpRanks: 2 });
    const o = await observation(c, (x) => (svc(x, 'decode').kv?.usedTokens ?? 0) > 0);
    const truth = d.sim.snapshot().kv.decode!;
    const kv = svc(o, 'decode').kv!;
    expect(kv.capacityTokens).toBe(truth.capacity);
    // The percentage beside the token counts is their quotient, never one rank's ratio.
    expect(kv.ratio).toBe(kv.usedTokens / kv.capacityTokens);
    expect(Math.abs(kv.ratio - truth.ratio)).toBeLessThan(0.05);
    expect(kv.ranks?.map((r) => r.rank)).toEqual(['0', '1']);
    expect(kv.ranks!.reduce((a, r) => a + r.used, 0)).toBe(kv.usedTokens);
    expect(kv.ranks!.reduce((a, r) => a + r.capacity, 0)).toBe(kv.capacityTokens);
    const fullest = kv.ranks!.reduce((a, r) => (r.ratio > a.ratio ? r : a));
    expect(kv.fullestRank).toEqual({ rank: fullest.rank, ratio: fullest.ratio });
    expect(kv.fullestRank!.ratio).toBeGreaterThanOrEqual(kv.ratio);
  });

  it('marks only the failing service when its /metrics breaks, and says why', async () => {
    const { core: c, demo: d } = await openDemo();
    await observation(c, complete);
    d.sim.setFault('metrics-500', true, 'prefill');
    // The scrape's own answer, not a poll whose probe had not answered within its budget (a busy machine).
    const o = await observation(c, (x) => {
      const m = svc(x, 'prefill').metrics;
      return m?.ok === false && !m.error.includes('no answer yet');
    });
    const m = svc(o, 'prefill').metrics!;
    expect(m.ok).toBe(false);
    if (!m.ok) expect(m.error).toMatch(/HTTP 500/);
    expect(svc(o, 'decode').metrics?.ok).toBe(true);
    expect(svc(o, 'decode').kv?.capacityTokens).toBe(2_580_000);
    expect(svc(o, 'prefill').kv).toBeUndefined();
    expect(svc(o, 'router').metrics?.ok).toBe(true);
  });

  it('says exactly what to change when a server runs without --enable-metrics', async () => {
    const { core: c } = await openDemo({ metricsDisabled: ['decode'] });
    // The scrape's own answer (404), not a poll whose probe had not answered within its budget (a busy machine).
    const o = await observation(c, (x) => {
      const m = svc(x, 'decode').metrics;
      return (
        m !== undefined &&
        !(m.ok === false && m.error.includes('no answer yet')) &&
        !!svc(x, 'decode').systemd
      );
    });
    const m = svc(o, 'decode').metrics!;
    expect(m.ok).toBe(false);
    if (!m.ok)
      expect(m.hint).toBe('Add --enable-metrics to ExecStart of sglang-decode.service, then restart it.');
  });

  it('shows the link as lost when the host drops the connection, then heals by itself', async () => {
    const { core: c, demo: d, deploymentId } = await openDemo();
    await observation(c, complete);
    const states: string[] = [];
    c.on('connection', (e) => {
      if (e.deploymentId === deploymentId) states.push(e.status.state);
    });
    d.sim.dropConnections();
    await expect.poll(() => states.includes('reconnecting'), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => states.at(-1), { timeout: 20_000 }).toBe('connected');
    // Scraping resumes after the reconnect.
    const after = await observation(c, complete, 20_000);
    expect(svc(after, 'decode').metrics?.ok).toBe(true);
    expect(svc(after, 'decode').systemd?.activeState).toBe('active');
    const events = await c.listEvents({ deploymentId });
    expect(events.some((e) => e.kind === 'connection' && /lost/.test(e.title))).toBe(true);
  });

  it('keeps a bounded KV history, with a gap exactly where the decode scrape failed', async () => {
    // A small ring, overfilled before the failure: the gap is then written into reused slots, where a row
    // that kept its old value would show up as a stale figure instead of a gap.
    const CAPACITY = 16;
    const store = new SignalsStore({ capacity: CAPACITY });
    const {
      core: c,
      demo: d,
      deploymentId,
    } = await openDemo({}, (core) => {
      new DashboardService(core, { store });
    });
    const seen = new Map<number, Observation>();
    c.on('observation', (o) => {
      if (o.deploymentId === deploymentId) seen.set(o.ts, o);
    });
    await expect.poll(() => seen.size, { timeout: 20_000 }).toBeGreaterThanOrEqual(CAPACITY + 2);
    const scrapeFailed = (x: Observation): boolean => svc(x, 'decode').metrics?.ok === false;
    const scraped = (x: Observation): boolean =>
      svc(x, 'decode').metrics?.ok === true && !!svc(x, 'decode').kv;
    d.sim.setFault('metrics-500', true, 'decode');
    await observation(c, scrapeFailed);
    await observation(c, scrapeFailed);
    d.sim.setFault('metrics-500', false, 'decode');
    for (let i = 0; i < 3; i++) await observation(c, scraped);

    // kv_ratio is written as null on a failed poll; kv_used is not written at all, so only the ring's clearing of
    // a reused slot makes it a gap.
    const r = store.getSeries({ deploymentId, keys: ['decode.kv_ratio', 'decode.kv_used'], maxPoints: 1000 });
    const { t, v } = r.series[0];
    const used = r.series[1].v;
    expect(r.series[1].t).toEqual(t);
    // Bounded: more polls than rows were written, and the ring holds exactly the newest CAPACITY of them.
    expect(seen.size).toBeGreaterThan(CAPACITY + 4);
    expect(r.decimated).toBe(false);
    expect(r.rawPoints).toBe(2 * CAPACITY);
    expect(t).toHaveLength(CAPACITY);
    const polls = [...seen.keys()].filter((ts) => ts <= r.lastMs!).sort((a, b) => a - b);
    expect(t).toEqual(polls.slice(-CAPACITY));
    expect(r.firstMs).toBe(t[0]);
    expect(r.firstMs).toBeGreaterThan(polls[0]);

    // Every row: null where the decode scrape failed, otherwise the KV ratio the poll reported.
    const failedAt: number[] = [];
    t.forEach((ts, i) => {
      const o = seen.get(ts)!;
      if (scrapeFailed(o)) {
        failedAt.push(i);
        expect(v[i], `row ${i} (failed scrape)`).toBeNull();
        expect(used[i], `row ${i} (failed scrape)`).toBeNull();
      } else {
        const kv = svc(o, 'decode').kv!;
        expect(kv.ratio).toBeGreaterThan(0);
        expect(kv.ratio).toBeLessThanOrEqual(1);
        expect(v[i], `row ${i}`).toBeCloseTo(kv.ratio, 6); // the ring stores float32
        expect(used[i], `row ${i}`).toBe(kv.usedTokens);
      }
    });
    expect(failedAt.length).toBeGreaterThanOrEqual(2);
    // The gap has figures on both sides.
    expect(v.slice(0, failedAt[0]).some((x) => x !== null)).toBe(true);
    expect(v.slice(failedAt.at(-1)! + 1)).toHaveLength(3);
    expect(v.slice(failedAt.at(-1)! + 1).every((x) => typeof x === 'number')).toBe(true);
  });
});
