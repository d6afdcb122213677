// The alert state machine, one scenario a row: pending → firing → resolved only on fresh data that has shown the
// condition clear for the hold time; missing data keeps a firing alert as "no data"; a lost link is one alert;
// an edited rule re-reads its alerts and a switched-off one ends them; restart loops are counted per unit; a
// restart by this console makes its unit's alerts expected and silent; values hovering at a threshold and a
// jittery queue do not flap. Each row feeds one poll a second and compares every change (type, second, notify).
import { describe, expect, it } from 'vitest';
import {
  evaluateAlerts,
  initialAlertState,
  type AlertInput,
  type AlertState,
} from '../../src/main/core/alerts/engine';
import { DEFAULT_ALERT_RULES } from '../../src/main/core/alerts/rules';
import type { ActiveAlert, AlertRule } from '../../src/shared/contract';
import type { Role } from '../../src/shared/domain';
import { DEMO_FLEET_WORKERS as WORKERS } from '../support/fleet-workers';

const ROLES: Role[] = ['router', 'prefill', 'decode'];
const T0 = 1_800_000_000_000;
const at = (s: number): number => T0 + s * 1000;

type Values = Record<string, number | null>;

function pair(over: Values = {}): Values {
  const v: Values = {};
  for (const r of ROLES) {
    v[`${r}.active`] = 1;
    v[`${r}.health_ok`] = 1;
    v[`${r}.metrics_ok`] = 1;
    v[`${r}.restarts`] = 0;
  }
  v['decode.kv_ratio'] = 0.5;
  v['prefill.queued'] = 0;
  v['decode.queued'] = 0;
  return { ...v, ...over };
}

/** What a lost link leaves in the store: no systemd state, no scrape, no KV; health as last checked. */
const LINK_LOST: Values = Object.fromEntries(
  ROLES.flatMap((r) => [
    [`${r}.active`, null],
    [`${r}.restarts`, null],
    [`${r}.metrics_ok`, 0],
    [`${r}.kv_ratio`, null],
  ]),
);

/** A fleet with every worker up; the role aggregates as the store makes them (up only while every worker is). */
function fleet(over: Values = {}): Values {
  const v: Values = {};
  for (const w of WORKERS) {
    v[`${w.role}.active@${w.id}`] = 1;
    v[`${w.role}.health_ok@${w.id}`] = 1;
    v[`${w.role}.metrics_ok@${w.id}`] = 1;
    v[`${w.role}.restarts@${w.id}`] = 0;
    if (w.role === 'decode') v[`decode.kv_ratio@${w.id}`] = 0.4;
  }
  Object.assign(v, over);
  for (const r of ROLES) {
    const ws = WORKERS.filter((w) => w.role === r);
    for (const k of ['active', 'health_ok', 'metrics_ok']) {
      const xs = ws.map((w) => v[`${r}.${k}@${w.id}`]);
      v[`${r}.${k}`] = xs.some((x) => x === null || x === undefined) ? 0 : Math.min(...(xs as number[]));
    }
    const rs = ws.map((w) => v[`${r}.restarts@${w.id}`]).filter((x): x is number => typeof x === 'number');
    v[`${r}.restarts`] = rs.reduce((a, b) => a + b, 0);
  }
  return v;
}

interface Poll {
  values: Values;
  links?: AlertInput['links'];
  restarting?: AlertInput['restarting'];
  rules?: readonly AlertRule[];
}

/** One poll a second from 0 to `toS`: every change with its second, and what was active and pending each second. */
function run(rules: readonly AlertRule[], poll: (s: number) => Poll, toS: number, workers?: typeof WORKERS) {
  let state: AlertState = initialAlertState();
  const changes: Array<{ type: string; sec: number; notify: boolean; title: string; key: string }> = [];
  const active: ActiveAlert[][] = [];
  const pending: ActiveAlert[][] = [];
  for (let s = 0; s <= toS; s++) {
    const p = poll(s);
    const r = evaluateAlerts(p.rules ?? rules, state, {
      ts: at(s),
      roles: ROLES,
      values: p.values,
      workers,
      links: p.links,
      restarting: p.restarting,
    });
    state = r.state;
    active.push(r.active);
    pending.push(r.pending ?? []);
    for (const c of r.changes)
      changes.push({ type: c.type, sec: s, notify: c.notify, title: c.alert.title, key: c.alert.key });
  }
  return { changes, active, pending };
}

function only(...ids: string[]): AlertRule[] {
  return ids.map((id) => {
    const r = DEFAULT_ALERT_RULES.find((x) => x.id === id);
    if (!r) throw new Error(`no default alert rule "${id}"`);
    return { ...r, roles: [...r.roles] };
  });
}

const up = [{ hostId: 'demo', label: 'demo', up: true }];
const down = (since: number) => [
  { hostId: 'demo', label: 'demo', up: false, since: at(since), detail: 'reconnecting, attempt 3' },
];

/** Deterministic jitter in [-a, a]. */
function jitter(seed: number, a: number): (s: number) => number {
  return (s) => {
    const x = Math.sin(seed * 9301 + s * 49297) * 233280;
    return Math.round((x - Math.floor(x)) * 2 * a - a);
  };
}

describe('the alert state machine', () => {
  it('missing data is "no data": /metrics failing does not resolve a firing KV alert', () => {
    // KV 95 % from the start; decode's /metrics answers 500 from 60 s to 120 s; back at 95 %, then drained at 150.
    const { changes, active, pending } = run(
      only('decode-kv-high'),
      (s) => ({
        values:
          s >= 60 && s <= 120
            ? pair({ 'decode.metrics_ok': 0, 'decode.kv_ratio': null })
            : pair({ 'decode.kv_ratio': s < 150 ? 0.95 : 0.5 }),
      }),
      200,
    );
    expect(changes.map((c) => [c.type, c.sec])).toEqual([
      ['fired', 30],
      ['resolved', 180],
    ]);
    // Pending before it fires, with when it would.
    expect(pending[10].map((a) => [a.key, a.since, a.firesAt])).toEqual([
      ['decode-kv-high|decode', at(0), at(30)],
    ]);
    // Without data: still firing, marked with the last poll that had data and why.
    expect(active[90][0].noData).toEqual({
      since: at(59),
      reason: 'no successful /metrics scrape of decode',
    });
    expect(active[90][0].detail).toContain('95 %');
    expect(active[130][0].noData).toBeUndefined();
  });

  it('a lost link is one alert for its host, and what fired before stays, marked without data', () => {
    const { changes, active } = run(
      only('decode-kv-high', 'metrics-stale', 'service-inactive', 'health-failing', 'restart-loop'),
      (s) =>
        s >= 100 && s < 200
          ? { values: pair({ ...LINK_LOST, 'decode.kv_ratio': null }), links: down(100) }
          : { values: pair({ 'decode.kv_ratio': 0.95 }), links: up },
      230,
    );
    expect(changes.map((c) => [c.type, c.sec, c.key])).toEqual([
      ['fired', 30, 'decode-kv-high|decode'],
      ['fired', 115, 'metrics-stale|host:demo'],
      ['resolved', 210, 'metrics-stale|host:demo'],
    ]);
    const during = active[150];
    expect(during.map((a) => a.title)).toEqual(['decode KV cache above 90 %', 'demo unreachable']);
    expect(during[0].noData).toEqual({ since: at(99), reason: 'demo unreachable (reconnecting, attempt 3)' });
    expect(during[1].detail).toBe(
      'no data from router, prefill, decode for 50 s: reconnecting, attempt 3; what is shown of them is as last seen',
    );
  });

  it('a lost link to one fleet host: one alert naming its workers, no stale or stopped workers claimed', () => {
    const onB = WORKERS.filter((w) => w.hosts?.includes('gpu-b'));
    const lost: Values = Object.fromEntries(
      onB.flatMap((w) => [
        [`${w.role}.active@${w.id}`, null],
        [`${w.role}.restarts@${w.id}`, null],
        [`${w.role}.metrics_ok@${w.id}`, 0],
        [`${w.role}.kv_ratio@${w.id}`, null],
      ]),
    );
    const links = (s: number) => [
      { hostId: 'gpu-a', label: 'gpu-a', up: true },
      s >= 10
        ? { hostId: 'gpu-b', label: 'gpu-b', up: false, since: at(10) }
        : { hostId: 'gpu-b', label: 'gpu-b', up: true },
      { hostId: 'gpu-c', label: 'gpu-c', up: true },
    ];
    const { changes, active } = run(
      DEFAULT_ALERT_RULES,
      (s) => ({ values: s >= 10 ? fleet(lost) : fleet(), links: links(s) }),
      120,
      WORKERS,
    );
    expect(changes.map((c) => [c.type, c.sec, c.title])).toEqual([['fired', 25, 'gpu-b unreachable']]);
    expect(active[120].map((a) => [a.key, a.workers])).toEqual([
      ['metrics-stale|host:gpu-b', ['decode-0', 'decode-1', 'decode-2']],
    ]);
  });

  it('editing a rule re-reads its alert without resolving it; switching the rule off ends it', () => {
    const lowered = only('decode-kv-high').map((r) => ({ ...r, threshold: 0.85 }));
    const off = lowered.map((r) => ({ ...r, enabled: false }));
    const { changes, active } = run(
      only('decode-kv-high'),
      (s) => ({
        values: pair({ 'decode.kv_ratio': s < 10 ? 0.5 : 0.905 }),
        rules: s < 60 ? undefined : s < 90 ? lowered : off,
      }),
      100,
    );
    // The condition never stopped being true: ended when switched off, never "resolved".
    expect(changes.map((c) => [c.type, c.sec])).toEqual([
      ['fired', 40],
      ['ended', 90],
    ]);
    expect(active[70][0]).toMatchObject({ title: 'decode KV cache above 85 %', since: at(40) });
  });

  it('a restart loop is counted per unit: one restart each of three workers is no loop', () => {
    const restarts = (s: number, per: Record<string, number[]>): Values =>
      Object.fromEntries(
        Object.entries(per).map(([w, times]) => [`decode.restarts@${w}`, times.filter((t) => s >= t).length]),
      );
    const spread = run(
      only('restart-loop'),
      (s) => ({ values: fleet(restarts(s, { 'decode-0': [100], 'decode-1': [200], 'decode-2': [300] })) }),
      400,
      WORKERS,
    );
    expect(spread.changes).toEqual([]);
    const loop = run(
      only('restart-loop'),
      (s) => ({ values: fleet(restarts(s, { 'decode-1': [100, 200, 300] })) }),
      400,
      WORKERS,
    );
    expect(loop.changes.map((c) => [c.type, c.sec, c.title])).toEqual([
      ['fired', 300, 'decode is restarting in a loop: decode-1 on gpu-b'],
    ]);
  });

  it('a restart by this console makes its unit’s alerts expected and silent; they end with it', () => {
    const restarting = [
      { role: 'decode' as Role, current: true, what: 'restart of decode by tester (operation r-1)' },
    ];
    const { changes, active } = run(
      only('service-inactive', 'metrics-stale'),
      (s) => ({
        values: s >= 12 && s < 35 ? pair({ 'decode.active': 0, 'decode.metrics_ok': 0 }) : pair(),
        restarting: s >= 10 && s < 40 ? restarting : [],
      }),
      80,
    );
    expect(changes.map((c) => [c.type, c.sec, c.key, c.notify])).toEqual([
      ['fired', 17, 'service-inactive|decode', false],
      ['resolved', 40, 'service-inactive|decode', false],
    ]);
    expect(active[20].map((a) => [a.key, a.expected])).toEqual([
      ['service-inactive|decode', 'restart of decode by tester (operation r-1)'],
    ]);
  });

  it('an expected alert still true after the restart is watched afresh and then fires, notified', () => {
    const restarting = [
      { role: 'decode' as Role, current: true, what: 'restart of decode by tester (operation r-1)' },
    ];
    const { changes } = run(
      only('service-inactive'),
      (s) => ({
        values: s >= 12 ? pair({ 'decode.active': 0 }) : pair(),
        restarting: s >= 10 && s < 40 ? restarting : [],
      }),
      80,
    );
    expect(changes.map((c) => [c.type, c.sec, c.notify])).toEqual([
      ['fired', 17, false],
      ['ended', 40, false],
      ['fired', 45, true],
    ]);
  });

  it('what a restart caused in a window (transfer failures) is not counted once it ends', () => {
    const restarting = [
      { role: 'decode' as Role, current: true, what: 'restart of decode by tester (operation r-1)' },
    ];
    const { changes } = run(
      only('transfer-failures'),
      (s) => ({
        // Prefill's transfers to decode fail while decode restarts (20 s to 30 s); none after.
        values: pair({ 'prefill.transfer_failed_total': s < 20 ? 0 : Math.min(s, 30) - 20 }),
        restarting: s >= 15 && s < 40 ? restarting : [],
      }),
      120,
    );
    expect(changes.map((c) => [c.type, c.sec, c.notify])).toEqual([
      ['fired', 21, false],
      // Counted from the restart's end: nothing since, fresh data says clear.
      ['resolved', 40, false],
    ]);
  });

  it('a fleet roll: the role’s transfers are the roll’s until it ends, a worker’s own alerts only in its turn', () => {
    // decode-0 is restarted from 10 s to 30 s, decode-1 from 40 s to 60 s (between them the roll waits).
    const roll = (s: number) =>
      ['decode-0', 'decode-1', 'decode-2'].map((w, i) => ({
        role: 'decode' as Role,
        worker: w,
        current: s >= 10 + i * 30 && s < 30 + i * 30,
        what: `rolling restart of every decode worker (roll 1)`,
      }));
    const { changes, active } = run(
      [...only('transfer-failures'), ...only('decode-kv-high').map((r) => ({ ...r, forS: 5 }))],
      (s) => ({
        values: fleet({
          // Transfers to decode fail between the workers' turns too (a worker back, not yet warm).
          'decode.transfer_failed_total': s < 32 ? 0 : Math.min(s, 45) - 32,
          'decode.metrics_ok': 1,
          // decode-2 (waiting its turn) fills up from 40 s: its own alert, not the roll's.
          'decode.kv_ratio@decode-2': s >= 40 ? 0.97 : 0.4,
        }),
        restarting: s >= 10 && s < 100 ? roll(s) : [],
      }),
      130,
      WORKERS,
    );
    expect(changes.map((c) => [c.type, c.sec, c.key, c.notify])).toEqual([
      ['fired', 33, 'transfer-failures|decode', false],
      ['fired', 45, 'decode-kv-high|decode', true],
      // The roll's end: the window counts afresh from there, and no failure came since.
      ['resolved', 100, 'transfer-failures|decode', false],
    ]);
    expect(active[50].find((a) => a.key === 'decode-kv-high|decode')?.expected).toBeUndefined();
  });

  it('the router failing its readiness while its only decode is restarted by this console is expected too', () => {
    const restarting = [
      { role: 'decode' as Role, current: true, what: 'restart of decode by tester (operation r-1)' },
    ];
    const { changes, active } = run(
      only('health-failing'),
      (s) => ({
        values: s >= 12 && s < 35 ? pair({ 'router.health_ok': 0 }) : pair(),
        restarting: s >= 10 && s < 40 ? restarting : [],
      }),
      80,
    );
    expect(changes.map((c) => [c.type, c.sec, c.key, c.notify])).toEqual([
      ['fired', 27, 'health-failing|router', false],
      ['resolved', 50, 'health-failing|router', false],
    ]);
    expect(active[30][0].expected).toBe(
      'restart of decode by tester (operation r-1); the router has no other decode server',
    );
    // In a fleet, a roll restarts one decode worker of three: the router failing then is news.
    const roll = [
      { role: 'decode' as Role, worker: 'decode-1', current: true, what: 'rolling restart (roll 1)' },
    ];
    const fleetRun = run(
      only('health-failing'),
      (s) => ({
        values: s >= 12 && s < 35 ? fleet({ 'router.health_ok@router': 0 }) : fleet(),
        restarting: s >= 10 && s < 40 ? roll : [],
      }),
      80,
      WORKERS,
    );
    expect(fleetRun.changes.map((c) => [c.type, c.sec, c.notify])).toEqual([
      ['fired', 27, true],
      ['resolved', 50, true],
    ]);
  });

  it('a firing restart loop holds back the stopped-unit and stale-metrics alerts of the same unit', () => {
    // decode crashes every 20 s from 100 s on, down for 8 s each time.
    const { changes, active } = run(
      only('restart-loop', 'service-inactive', 'metrics-stale'),
      (s) => {
        const crashes = s < 100 ? 0 : Math.floor((s - 100) / 20) + 1;
        const downNow = s >= 100 && (s - 100) % 20 < 8;
        return {
          values: pair({
            'decode.restarts': crashes,
            'decode.active': downNow ? 0 : 1,
            'decode.metrics_ok': downNow ? 0 : 1,
          }),
        };
      },
      260,
    );
    const notified = changes.filter((c) => c.notify && c.type === 'fired').map((c) => [c.sec, c.key]);
    // The loop fires at the third restart; the stops before it were alerts of their own, the ones after are not.
    expect(notified).toEqual([
      [105, 'service-inactive|decode'],
      [125, 'service-inactive|decode'],
      [140, 'restart-loop|decode'],
    ]);
    // After it, the crashes are the loop's: nothing else starts, quietly or not.
    expect(changes.filter((c) => c.type === 'fired' && c.sec > 140)).toEqual([]);
    expect(active[245].map((a) => a.key)).toEqual(['restart-loop|decode']);
  });

  it('a KV usage hovering at the threshold does not flap: it clears only below threshold − margin for 30 s', () => {
    const { changes } = run(
      only('decode-kv-high'),
      (s) => ({
        values: pair({
          'decode.kv_ratio': s < 40 ? 0.95 : s < 200 ? (Math.floor(s / 5) % 2 ? 0.895 : 0.905) : 0.85,
        }),
      }),
      260,
    );
    expect(changes.map((c) => [c.type, c.sec])).toEqual([
      ['fired', 30],
      ['resolved', 230],
    ]);
  });

  it('a queue growing with jitter fires once and resolves once, after it stops growing', () => {
    const noise = jitter(7, 6);
    const { changes } = run(
      only('queue-growing'),
      (s) => ({ values: pair({ 'prefill.queued': 20 + Math.floor(Math.min(s, 300) / 10) + noise(s) }) }),
      600,
    );
    expect(changes.map((c) => c.type)).toEqual(['fired', 'resolved']);
    expect(changes[0].sec).toBeGreaterThanOrEqual(108);
    expect(changes[0].sec).toBeLessThan(150);
    expect(changes[1].sec).toBeGreaterThan(300);
  });
});
