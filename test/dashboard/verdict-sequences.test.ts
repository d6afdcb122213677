// The verdict over time, run round after round through the same tracker the dashboard uses, over the sequences of
// a bad day: a crash loop and its recovery, a restart by the operator, a roll of a fleet's decode workers, decode's
// KV filling up and draining, the link lost and back, and a router that never re-adds a worker. Each row is one
// round's facts (the units' systemd state, /health and journal evidence read into their conditions by the real
// unitCondition, the signals, the router's worker list, the link, what this console restarts) and the text the
// verdict must say then. The windowed figures since a recovery are given as the store would answer them.
import { describe, expect, it } from 'vitest';
import { VerdictTracker, type VerdictRound } from '../../src/main/core/signals/verdict-tracker';
import type { UnitReading } from '../../src/main/core/signals/verdict';
import type { OperatorAction } from '../../src/main/core/actions/in-progress';
import { DEMO_FLEET_WORKERS } from '../support/fleet-workers';
import type { UnitJournalEvidence } from '../../src/shared/domain';
import { unitCondition } from '../../src/shared/unit-condition';
import type { ConnectionStatus, HealthResult, Role, UnitState } from '../../src/shared/domain';
import type { RouterWorkerState, Verdict } from '../../src/shared/contract';

// The times the verdict names are the operator's wall clock: read in UTC here.
process.env.TZ = 'UTC';

const DAY = Date.UTC(2026, 11, 6);
/** "05:49:23" on the test's day. */
const at = (hms: string): number => {
  const [h, m, s] = hms.split(':').map(Number);
  return DAY + ((h * 60 + m) * 60 + s) * 1000;
};

// ---- units, as systemd, /health and the journal show them -----------------------------------------------------

type Shape = 'serving' | 'stopping' | 'starting' | 'loading' | { crash: number } | 'health-fails';

const CUDA = 'RuntimeError: CUDA error: an illegal memory access was encountered';

/** One unit's condition at `now`, read by unitCondition from the state a real systemd reports in that shape. */
function condition(role: Role, unit: string, shape: Shape, now: number, restarts = 0) {
  const base: UnitState = {
    unit,
    loadState: 'loaded',
    activeState: 'active',
    subState: 'running',
    mainPid: 4000 + restarts,
    nRestarts: restarts,
    activeEnterTimestamp: now - 60_000,
    result: 'success',
    execMainCode: 0,
    execMainStatus: 0,
    restartPolicy: 'on-failure',
    stateChangeTimestamp: now - 60_000,
    execMainStartTimestamp: now - 60_000,
    inactiveEnterTimestamp: null,
  };
  const ok: HealthResult = { ok: true, status: 200, detail: '200 OK', checkedAt: now };
  const refused: HealthResult = { ok: false, detail: 'connection refused', checkedAt: now };
  const evidence: UnitJournalEvidence = { loadsMs: [4 * 60_000] };
  let systemd = base;
  let health: HealthResult | undefined = ok;
  if (typeof shape === 'object') {
    // Between two crashes: systemd waits RestartSec before the next start.
    systemd = {
      ...base,
      activeState: 'activating',
      subState: 'auto-restart',
      nRestarts: shape.crash - 1,
      mainPid: 0,
      execMainCode: 1,
      execMainStatus: 1,
      result: 'exit-code',
      stateChangeTimestamp: now - 2000,
    };
    health = refused;
    evidence.lastExit = { ts: now - 2000, code: 'exited', status: '1/FAILURE', text: '' };
    evidence.lastError = { ts: now - 2100, text: CUDA };
  } else if (shape === 'stopping') {
    systemd = { ...base, activeState: 'deactivating', subState: 'stop-sigterm', stateChangeTimestamp: now };
    health = refused;
  } else if (shape === 'starting') {
    systemd = { ...base, activeState: 'activating', subState: 'start', stateChangeTimestamp: now };
    health = undefined;
  } else if (shape === 'loading') {
    systemd = { ...base, execMainStartTimestamp: now - 50_000, activeEnterTimestamp: now - 50_000 };
    evidence.startedAt = now - 50_000;
    health = refused;
  } else if (shape === 'health-fails') {
    health = {
      ok: false,
      status: 503,
      detail: '503 — not ready (starting, loading or draining)',
      checkedAt: now,
    };
  }
  return unitCondition({ role, systemd, ...(health ? { health } : {}), evidence, now });
}

const UNIT: Record<string, string> = {
  router: 'sglang-router.service',
  prefill: 'sglang-prefill.service',
  decode: 'sglang-decode.service',
};

/** A one-host pair's services: each by its role, with the URL the router lists it by. */
function pair(now: number, shapes: Partial<Record<Role, Shape>>, restarts = 0): UnitReading[] {
  return (['router', 'prefill', 'decode'] as const).map((role) => ({
    key: role,
    role,
    hostId: 'demo',
    ...(role !== 'router'
      ? { url: role === 'prefill' ? 'http://127.0.0.1:30100' : 'http://127.0.0.1:30200' }
      : {}),
    condition: condition(role, UNIT[role], shapes[role] ?? 'serving', now, role === 'decode' ? restarts : 0),
  }));
}

/** A flowing pipeline's figures, and the overrides of a round. */
function values(over: Record<string, number | null> = {}): Record<string, number | null> {
  const out: Record<string, number | null> = {
    'prefill.running': 4,
    'prefill.queued': 1,
    'prefill.prefill_bootstrap_queue': 0,
    'prefill.prefill_inflight_queue': 0,
    'decode.running': 30,
    'decode.queued': 0,
    'decode.decode_prealloc_queue': 0,
    'decode.decode_transfer_queue': 1,
    'decode.kv_ratio': 0.5,
    'router.router_requests_per_s': 5,
    'router.router_error_share': 0,
  };
  for (const r of ['router', 'prefill', 'decode'])
    Object.assign(out, { [`${r}.active`]: 1, [`${r}.health_ok`]: 1, [`${r}.metrics_ok`]: 1 });
  return { ...out, ...over };
}

const connected: ConnectionStatus = { state: 'connected', since: at('05:00:00') };
const HOST = { hostId: 'demo', label: 'demo GPU host (simulated)' };

/** The router's list for a one-host pair: decode healthy or not (its circuit breaker open when not). */
function routerList(decodeHealthy: boolean): RouterWorkerState[] {
  return [
    { url: 'http://127.0.0.1:30100', role: 'prefill', healthy: true, cbState: 'closed' },
    {
      url: 'http://127.0.0.1:30200',
      role: 'decode',
      healthy: decodeHealthy,
      cbState: decodeHealthy ? 'closed' : 'open',
    },
  ];
}

// ---- the table runner ------------------------------------------------------------------------------------------

interface Step {
  at: string;
  round: Omit<VerdictRound, 'ts' | 'roles'> & { roles?: Role[] };
  /** The windowed figures since the recovery, as the store answers them (undefined: no recovery to read from). */
  fresh?: Record<string, number | null>;
  kind: Verdict['kind'];
  headline: string | RegExp;
  /** Lines the evidence must hold. */
  evidence?: (string | RegExp)[];
  nextStep?: string | RegExp;
  /** Texts that must appear nowhere in the verdict (what would be false at that moment). */
  never?: RegExp[];
}

function run(steps: Step[]): void {
  const tracker = new VerdictTracker();
  for (const s of steps) {
    const ts = at(s.at);
    let asked: number | null = null;
    const v = tracker.next(
      { roles: ['router', 'prefill', 'decode'], ...s.round, ts },
      s.fresh
        ? (since) => {
            asked = since;
            return s.fresh;
          }
        : undefined,
    );
    const where = `${s.at}: ${JSON.stringify(v, null, 1)}`;
    expect(v.kind, where).toBe(s.kind);
    if (typeof s.headline === 'string') expect(v.headline, where).toBe(s.headline);
    else expect(v.headline, where).toMatch(s.headline);
    for (const e of s.evidence ?? [])
      expect(
        v.evidence.some((l) => (typeof e === 'string' ? l === e : e.test(l))),
        `${where}\nmissing evidence ${String(e)}`,
      ).toBe(true);
    if (s.nextStep) expect(v.nextStep, where).toMatch(s.nextStep);
    expect(v.evidence.length, `${where}: every verdict has its evidence`).toBeGreaterThan(0);
    expect(v.nextStep.length, `${where}: every verdict has a next step`).toBeGreaterThan(0);
    const all = [v.headline, ...v.evidence, v.nextStep].join('\n');
    for (const bad of s.never ?? []) expect(all, where).not.toMatch(bad);
    if (s.fresh) expect(asked, `${where}: the windowed figures are asked since the recovery`).not.toBeNull();
  }
}

const links = (status: ConnectionStatus = connected) => [{ ...HOST, status }];

// ---- the sequences ---------------------------------------------------------------------------------------------

describe('the verdict over a bad day, round by round', () => {
  it('decode crash-loops, then comes back: why and what next, then "recovering" while the 5xx of its outage fade', () => {
    run([
      {
        at: '05:48:00',
        round: {
          values: values(),
          units: pair(at('05:48:00'), {}),
          links: links(),
          routerWorkers: routerList(true),
        },
        kind: 'healthy',
        headline: 'Healthy: no queue is building up anywhere in the pipeline.',
        nextStep: 'nothing to do',
      },
      {
        at: '05:48:10',
        round: {
          values: values({ 'decode.active': 0, 'router.router_error_share': 0.6 }),
          units: pair(at('05:48:10'), { decode: { crash: 1 }, router: 'health-fails' }),
          links: links(),
          routerWorkers: routerList(false),
        },
        kind: 'service-down',
        headline: `Requests cannot flow: decode is not serving — crash-looping: restart 1, exit status 1 (${CUDA}).`,
        evidence: ['router: not ready while no decode worker serves, as expected'],
        nextStep:
          'decode: open the journal at the crash; `systemctl stop sglang-decode.service` ends the loop',
        never: [/router-bound/i, /Router-bound/],
      },
      {
        at: '05:49:00',
        round: {
          values: values({ 'decode.active': 0, 'router.router_error_share': 0.99 }),
          units: pair(at('05:49:00'), { decode: { crash: 4 }, router: 'health-fails' }),
          links: links(),
          routerWorkers: routerList(false),
        },
        kind: 'service-down',
        headline: `Requests cannot flow: decode is not serving — crash-looping: restart 4, exit status 1 (${CUDA}).`,
        evidence: ['decode: not serving since 05:48:58'],
      },
      {
        // Back: the router has not re-added it yet, the last minute is all 5xx, and nothing was measured since.
        at: '05:49:23',
        round: {
          values: values({ 'router.router_error_share': 0.99 }),
          units: pair(at('05:49:23'), { router: 'health-fails' }, 3),
          links: links(),
          routerWorkers: routerList(false),
        },
        fresh: { 'router.router_error_share': null },
        kind: 'recovering',
        headline: 'Recovering: decode was down until 05:49:23; 5xx share since then not measured yet.',
        evidence: [
          `decode: crash-looping: restart 4, exit status 1 (${CUDA}) from 05:48:10 to 05:49:23 (1 min 13 s)`,
          'the router has not re-added decode yet (circuit breaker open)',
          'router: not ready yet after decode came back; it re-checks its workers on its own',
        ],
        nextStep: 'it came back by itself: read why it went down in its journal at 05:48:10',
        never: [/Router-bound/, /router is failing/],
      },
      {
        // The router still sends to it before re-adding it: 5xx since the recovery too — the router catching up.
        at: '05:49:30',
        round: {
          values: values({ 'router.router_error_share': 0.95 }),
          units: pair(at('05:49:30'), {}, 3),
          links: links(),
          routerWorkers: routerList(false),
        },
        fresh: { 'router.router_error_share': 0.3 },
        kind: 'recovering',
        headline:
          'Recovering: decode was down until 05:49:23; 5xx share falling (30 % since then, 95 % over the last minute).',
        never: [/Router-bound/, /router is failing/],
      },
      {
        at: '05:49:40',
        round: {
          values: values({ 'router.router_error_share': 0.6 }),
          units: pair(at('05:49:40'), {}, 3),
          links: links(),
          routerWorkers: routerList(true),
        },
        fresh: { 'router.router_error_share': 0 },
        kind: 'recovering',
        headline:
          'Recovering: decode was down until 05:49:23; 5xx share falling (0 % since then, 60 % over the last minute).',
        evidence: [
          'decode now: running, healthy; restarted automatically 3 times',
          // The window starts once the router is ready again too: the last of the episode to come back.
          "rates and shares are read since 05:49:30: the last minute's still hold the outage",
        ],
      },
      {
        // A minute on, the standard window holds none of the outage: the transition is named once more.
        at: '05:50:30',
        round: {
          values: values(),
          units: pair(at('05:50:30'), {}, 3),
          links: links(),
          routerWorkers: routerList(true),
        },
        kind: 'healthy',
        headline: 'Healthy again since 05:49:23: no queue is building up anywhere in the pipeline.',
        evidence: [
          `was service-down until 05:49:23: decode is not serving — crash-looping: restart 4, exit status 1 (${CUDA})`,
        ],
        nextStep: 'nothing to do',
      },
    ]);
  });

  it('a restart by the operator: said as theirs while it runs, never as the router failing, then "recovering"', () => {
    const restart = (step: string): OperatorAction[] => [
      { kind: 'restart', id: 'op-1', current: ['decode'], step },
    ];
    run([
      {
        at: '05:50:00',
        round: {
          values: values(),
          units: pair(at('05:50:00'), {}),
          links: links(),
          routerWorkers: routerList(true),
        },
        kind: 'healthy',
        headline: 'Healthy: no queue is building up anywhere in the pipeline.',
      },
      {
        at: '05:50:05',
        round: {
          values: values(),
          units: pair(at('05:50:05'), { decode: 'stopping' }),
          links: links(),
          routerWorkers: routerList(false),
          actions: restart('waiting for systemd to stop and start the unit'),
        },
        kind: 'restarting',
        headline: 'decode is being restarted by you; requests wait until it is back.',
        evidence: ['decode: waiting for systemd to stop and start the unit'],
        nextStep: /^nothing to do while the restart runs/,
      },
      {
        // The router answers 5xx and counts decode unhealthy, circuit breaker open: the restart's doing.
        at: '05:50:40',
        round: {
          values: values({ 'decode.health_ok': 0, 'router.router_error_share': 0.4, 'router.health_ok': 0 }),
          units: pair(at('05:50:40'), { decode: 'loading', router: 'health-fails' }),
          links: links(),
          routerWorkers: routerList(false),
          actions: restart('loading weights: shard 9/17 (53 %)'),
        },
        kind: 'restarting',
        headline: 'decode is being restarted by you; requests wait until it is back.',
        evidence: [
          'decode: loading weights: shard 9/17 (53 %)',
          'decode: running, model loading (50 s, last load took 4 min)',
          'router: not ready while no decode worker serves, as expected',
        ],
        never: [/Router-bound/, /router is failing/, /not healthy: decode/],
      },
      {
        // Healthy again; the restart still waits for the router to take it back.
        at: '05:51:40',
        round: {
          values: values({ 'router.router_error_share': 0.5 }),
          units: pair(at('05:51:40'), {}),
          links: links(),
          routerWorkers: routerList(false),
          actions: restart('the router reports it healthy: waiting'),
        },
        kind: 'restarting',
        headline: 'decode is being restarted by you; requests wait until it is back.',
      },
      {
        at: '05:51:45',
        round: {
          values: values({ 'router.router_error_share': 0.8 }),
          units: pair(at('05:51:45'), {}),
          links: links(),
          routerWorkers: routerList(true),
        },
        fresh: { 'router.router_error_share': 0 },
        kind: 'recovering',
        headline:
          'Recovering: decode was being restarted by you until 05:51:40; 5xx share falling (0 % since then, 80 % over the last minute).',
        evidence: [/^decode: restarted by you from 05:50:05 to 05:51:40/],
        nextStep: /^nothing to do: it is back/,
      },
      {
        at: '05:52:50',
        round: {
          values: values(),
          units: pair(at('05:52:50'), {}),
          links: links(),
          routerWorkers: routerList(true),
        },
        kind: 'healthy',
        headline: 'Healthy: no queue is building up anywhere in the pipeline.',
      },
    ]);
  });

  it('a roll of the fleet\u2019s decode workers: the worker being restarted is named with its place, the router never blamed', () => {
    const W = DEMO_FLEET_WORKERS;
    const fleetUnits = (now: number, shapes: Record<string, Shape>): UnitReading[] =>
      W.map((w) => ({
        key: w.id,
        role: w.role,
        hostId: w.hosts![0],
        ...(w.url ? { url: w.url } : {}),
        condition: condition(w.role, `sglang-${w.id}.service`, shapes[w.id] ?? 'serving', now),
      }));
    const fleetValues = (over: Record<string, number | null> = {}): Record<string, number | null> => {
      const v = values(over);
      for (const w of W)
        Object.assign(v, { [`${w.role}.active@${w.id}`]: 1, [`${w.role}.health_ok@${w.id}`]: 1 });
      return { ...v, ...over };
    };
    const fleetList = (unhealthy: string | null): RouterWorkerState[] =>
      W.filter((w) => w.url).map((w) => ({
        url: w.url!,
        role: w.role,
        healthy: w.id !== unhealthy,
        cbState: w.id === unhealthy ? 'open' : 'closed',
      }));
    const fleetLinks = ['gpu-a', 'gpu-b', 'gpu-c'].map((h) => ({ hostId: h, label: h, status: connected }));
    const roll = (worker: string, index: number, step: string): OperatorAction[] => [
      { kind: 'roll', id: 'roll-1', current: [worker], position: { index, total: 3 }, step },
    ];
    const round = (
      now: string,
      shapes: Record<string, Shape>,
      unhealthy: string | null,
      actions?: OperatorAction[],
      share = 0,
    ) => ({
      // The router's gauges count what its list says; the worker's own keys keep the last /health read (ok).
      values: fleetValues({
        'router.workers_total': 5,
        'router.workers_healthy': unhealthy ? 4 : 5,
        'router.router_error_share': share,
      }),
      workers: W,
      units: fleetUnits(at(now), shapes),
      links: fleetLinks,
      routerWorkers: fleetList(unhealthy),
      ...(actions ? { actions } : {}),
    });
    run([
      {
        at: '06:00:00',
        round: round('06:00:00', {}, null),
        kind: 'healthy',
        headline: 'Healthy: no queue is building up anywhere in the pipeline.',
      },
      {
        at: '06:00:05',
        round: round(
          '06:00:05',
          { 'decode-0': 'stopping' },
          'decode-0',
          roll('decode-0', 1, 'stop the unit'),
        ),
        kind: 'restarting',
        headline: 'decode-0 is being restarted by you — roll 1/3.',
        evidence: ['2 of 3 decode workers serve meanwhile'],
        nextStep:
          /^nothing to do while the roll runs: it goes on to the next worker once decode-0 is healthy at the router/,
      },
      {
        // The screen: 5xx at 0.0 %, the router's breaker open for decode-1, which this console restarts.
        at: '06:01:00',
        round: round(
          '06:01:00',
          { 'decode-1': 'loading' },
          'decode-1',
          roll('decode-1', 2, 'loading weights: shard 9/17 (53 %)'),
        ),
        kind: 'restarting',
        headline: 'decode-1 is being restarted by you — roll 2/3.',
        evidence: [
          'decode-1 on gpu-b: loading weights: shard 9/17 (53 %)',
          'decode-1 on gpu-b: running, model loading (50 s, last load took 4 min)',
          '2 of 3 decode workers serve meanwhile',
        ],
        never: [/Router-bound/, /circuit breaker open/, /not healthy: decode-1/],
      },
      {
        at: '06:02:00',
        round: round(
          '06:02:00',
          { 'decode-2': 'starting' },
          'decode-2',
          roll('decode-2', 3, 'start the unit'),
          // Requests in flight to decode-2 when it stopped failed: the restart's doing, not the router's.
          0.11,
        ),
        kind: 'restarting',
        headline: 'decode-2 is being restarted by you — roll 3/3.',
        evidence: ['11 % of router responses are 5xx while the restart runs'],
        never: [/Router-bound/],
      },
      {
        at: '06:02:40',
        round: round('06:02:40', {}, null),
        fresh: { 'router.router_error_share': 0 },
        kind: 'recovering',
        headline:
          'Recovering: decode-2 on gpu-b+gpu-c was being restarted by you until 06:02:40; no 5xx since then.',
      },
      {
        at: '06:03:45',
        round: round('06:03:45', {}, null),
        kind: 'healthy',
        headline: 'Healthy: no queue is building up anywhere in the pipeline.',
      },
    ]);
  });

  it('decode KV full, then drained: decode-bound with what to do, then the way out named', () => {
    const round = (now: string, over: Record<string, number | null>) => ({
      values: values(over),
      units: pair(at(now), {}),
      links: links(),
      routerWorkers: routerList(true),
    });
    run([
      {
        at: '06:10:00',
        round: round('06:10:00', {}),
        kind: 'healthy',
        headline: 'Healthy: no queue is building up anywhere in the pipeline.',
      },
      {
        at: '06:10:30',
        round: round('06:10:30', { 'decode.kv_ratio': 0.97, 'decode.decode_prealloc_queue': 20 }),
        kind: 'decode-bound',
        headline:
          'Decode-bound: requests are piling up at decode — 20 requests waiting for KV slots on decode.',
        evidence: ['decode KV cache 97 % full'],
        nextStep: /^decode has no KV room: lower the load/,
      },
      {
        at: '06:11:00',
        round: round('06:11:00', { 'decode.kv_ratio': 0.4 }),
        kind: 'healthy',
        headline: 'Healthy again since 06:11:00: no queue is building up anywhere in the pipeline.',
        evidence: ['was decode-bound until 06:11:00: 20 requests waiting for KV slots on decode'],
      },
      {
        at: '06:16:00',
        round: round('06:16:00', { 'decode.kv_ratio': 0.4 }),
        kind: 'healthy',
        headline: 'Healthy: no queue is building up anywhere in the pipeline.',
      },
    ]);
  });

  it('the link lost, then back: "host unreachable since", nothing asserted that needs data, then the way back', () => {
    const stale: ConnectionStatus = {
      state: 'stale',
      since: at('05:54:18'),
      reason: 'no command answered for 3.0 s',
    };
    const reconnecting: ConnectionStatus = {
      state: 'reconnecting',
      attempt: 5,
      nextAttemptAt: at('05:54:53'),
      lastError: 'demo GPU host (simulated): no TCP connection within 20 s',
      since: at('05:54:18'),
    };
    // While the link is down the monitor reads nothing: no systemd state, /metrics "no connection", the last /health.
    const dark = values({
      'router.active': null,
      'prefill.active': null,
      'decode.active': null,
      'router.metrics_ok': 0,
      'prefill.metrics_ok': 0,
      'decode.metrics_ok': 0,
    });
    const unknownUnits = (now: number): UnitReading[] =>
      pair(now, {}).map((u) => ({
        ...u,
        condition: unitCondition({ role: u.role, now }),
        metricsError: 'no connection to demo GPU host (simulated)',
      }));
    const nothingClaimed = [/no .*worker serving/i, /No metrics/, /yet/, /Healthy/, /not serving/];
    run([
      {
        at: '05:54:10',
        round: {
          values: values(),
          units: pair(at('05:54:10'), {}),
          links: links(),
          routerWorkers: routerList(true),
        },
        kind: 'healthy',
        headline: 'Healthy: no queue is building up anywhere in the pipeline.',
      },
      {
        at: '05:54:21',
        round: {
          values: dark,
          units: unknownUnits(at('05:54:21')),
          links: links(stale),
          routerWorkers: routerList(true),
        },
        kind: 'unreachable',
        headline: 'Host unreachable since 05:54:18 (not answering, the link is still open).',
        evidence: [
          'last data at 05:54:10',
          'unit states, health and metrics cannot be read until the link is back',
          'before it dropped: Healthy: no queue is building up anywhere in the pipeline.',
        ],
        nextStep: /^check the network or VPN to demo GPU host \(simulated\)/,
        never: [/No metrics/, /no .*worker serving/i, /Requests cannot flow/],
      },
      {
        at: '05:54:45',
        round: {
          values: dark,
          units: unknownUnits(at('05:54:45')),
          links: links(reconnecting),
          routerWorkers: routerList(true),
        },
        kind: 'unreachable',
        headline: 'Host unreachable since 05:54:18 (reconnecting, attempt 5).',
        evidence: ['last error: demo GPU host (simulated): no TCP connection within 20 s'],
        nextStep:
          'check the network or VPN to demo GPU host (simulated); the console reconnects by itself (next attempt at 05:54:53)',
        never: nothingClaimed.slice(0, 3),
      },
      {
        at: '05:55:48',
        round: {
          values: values(),
          units: pair(at('05:55:48'), {}),
          links: links({ state: 'connected', since: at('05:55:48') }),
          routerWorkers: routerList(true),
        },
        fresh: { 'router.router_error_share': null },
        kind: 'recovering',
        headline:
          'Recovering: the link to demo GPU host (simulated) was down until 05:55:48; 5xx share since then not measured yet.',
        nextStep: /^nothing to do: figures since it came back are current/,
      },
      {
        at: '05:56:50',
        round: {
          values: values(),
          units: pair(at('05:56:50'), {}),
          links: links(),
          routerWorkers: routerList(true),
        },
        kind: 'healthy',
        headline: 'Healthy: no queue is building up anywhere in the pipeline.',
      },
    ]);
  });

  it('a fleet host lost: its workers are named as not read, the other hosts still judged', () => {
    const W = DEMO_FLEET_WORKERS;
    const down: ConnectionStatus = {
      state: 'reconnecting',
      attempt: 3,
      nextAttemptAt: at('06:20:30'),
      lastError: 'gpu-b: connection lost',
      since: at('06:20:05'),
    };
    const v = values();
    for (const w of W)
      Object.assign(v, { [`${w.role}.active@${w.id}`]: 1, [`${w.role}.health_ok@${w.id}`]: 1 });
    run([
      {
        at: '06:20:10',
        round: {
          values: v,
          workers: W,
          units: W.map((w) => ({
            key: w.id,
            role: w.role,
            hostId: w.hosts![0],
            condition:
              w.hosts![0] === 'gpu-b'
                ? unitCondition({ role: w.role, now: at('06:20:10') })
                : condition(w.role, `${w.id}.service`, 'serving', at('06:20:10')),
          })),
          links: [
            { hostId: 'gpu-a', label: 'gpu-a', status: connected },
            { hostId: 'gpu-b', label: 'gpu-b', status: down },
            { hostId: 'gpu-c', label: 'gpu-c', status: connected },
          ],
        },
        kind: 'unreachable',
        headline:
          'gpu-b unreachable since 06:20:05 (reconnecting, attempt 3): decode-0, decode-1, decode-2 (gpu-b, gpu-c) not read.',
        evidence: ['gpu-b: last error: gpu-b: connection lost', /^the other hosts: /],
        nextStep: /^check the network or VPN to gpu-b/,
      },
    ]);
  });

  it("decode's /metrics answers 500 while it serves: its figures are unknown, never read as an empty queue", () => {
    const blind = values({
      'decode.metrics_ok': 0,
      'decode.running': null,
      'decode.queued': null,
      'decode.decode_prealloc_queue': null,
      'decode.decode_transfer_queue': null,
      'decode.kv_ratio': null,
    });
    const units = (now: number): UnitReading[] =>
      pair(now, {}).map((u) =>
        u.role === 'decode'
          ? { ...u, metricsError: 'decode (sglang-decode.service): HTTP 500 Internal Server Error' }
          : u,
      );
    run([
      {
        at: '06:30:00',
        round: {
          values: blind,
          units: units(at('06:30:00')),
          links: links(),
          routerWorkers: routerList(true),
        },
        kind: 'unknown',
        headline:
          'Partly unknown: decode serves but its /metrics fails, so its queues cannot be read; the rest shows none building up.',
        evidence: ['decode: /metrics fails: decode (sglang-decode.service): HTTP 500 Internal Server Error'],
        nextStep:
          'open the decode service page: its /metrics fails (decode (sglang-decode.service): HTTP 500 Internal Server Error)',
        never: [/Healthy/, /decode: 0 requests/],
      },
    ]);
  });

  it('a router that never re-adds a worker: recovering first, then blamed once its own window holds no outage', () => {
    run([
      {
        at: '07:00:00',
        round: {
          values: values({ 'decode.active': 0 }),
          units: pair(at('07:00:00'), { decode: { crash: 1 } }),
          links: links(),
          routerWorkers: routerList(false),
        },
        kind: 'service-down',
        headline: /^Requests cannot flow: decode is not serving — crash-looping/,
      },
      {
        at: '07:00:30',
        round: {
          values: values(),
          units: pair(at('07:00:30'), {}, 1),
          links: links(),
          routerWorkers: routerList(false),
        },
        fresh: { 'router.router_error_share': 0.2 },
        kind: 'recovering',
        headline: 'Recovering: decode was down until 07:00:30; 20 % of router responses 5xx since then.',
        evidence: ['the router has not re-added decode yet (circuit breaker open)'],
      },
      {
        // A minute on decode still serves and answers /health, and the router still counts it unhealthy: its doing.
        at: '07:01:31',
        round: {
          values: values(),
          units: pair(at('07:01:31'), {}, 1),
          links: links(),
          routerWorkers: routerList(false),
        },
        kind: 'router-bound',
        headline:
          'Router-bound: the router is failing requests while the servers have room — 1 of 2 workers healthy at the router; not healthy: decode (circuit breaker open).',
        nextStep:
          "the router counts decode unhealthy while its own /health answers: check the router's health checks and its journal",
      },
    ]);
  });
});
