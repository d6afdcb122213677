import { describe, expect, it } from 'vitest';
import {
  evaluateAlerts,
  initialAlertState,
  type AlertChange,
  type AlertState,
} from '../../src/main/core/alerts/engine';
import { DEFAULT_ALERT_RULES } from '../../src/main/core/alerts/rules';
import type { AlertRule } from '../../src/shared/contract';
import type { Role } from '../../src/shared/domain';

const ROLES: Role[] = ['router', 'prefill', 'decode'];
const T0 = 1_800_000_000_000;

function healthy(): Record<string, number | null> {
  const v: Record<string, number | null> = {};
  for (const r of ROLES) {
    v[`${r}.active`] = 1;
    v[`${r}.health_ok`] = 1;
    v[`${r}.metrics_ok`] = 1;
    v[`${r}.restarts`] = 0;
  }
  v['decode.kv_ratio'] = 0.5;
  v['prefill.queued'] = 0;
  v['decode.queued'] = 0;
  return v;
}

/** Feeds one sample per second from `fromS` to `toS` (inclusive); returns every change and the final active set. */
function run(
  rules: readonly AlertRule[],
  at: (sec: number) => Record<string, number | null>,
  toS: number,
  start: { state?: AlertState; fromS?: number } = {},
) {
  let state = start.state ?? initialAlertState();
  const changes: Array<AlertChange & { sec: number }> = [];
  let active: ReturnType<typeof evaluateAlerts>['active'] = [];
  for (let sec = start.fromS ?? 0; sec <= toS; sec++) {
    const r = evaluateAlerts(rules, state, { ts: T0 + sec * 1000, roles: ROLES, values: at(sec) });
    state = r.state;
    active = r.active;
    for (const c of r.changes) changes.push({ ...c, sec });
  }
  return { state, changes, active };
}

/** The default rule `id` alone; a renamed rule must not turn the "stays quiet" cases into runs without rules. */
function only(id: string): AlertRule[] {
  const rules = DEFAULT_ALERT_RULES.filter((r) => r.id === id);
  if (rules.length !== 1) throw new Error(`expected one default alert rule "${id}", found ${rules.length}`);
  return rules;
}

describe('alert rules', () => {
  it('stays quiet on a healthy deployment with the default rules', () => {
    const { changes, active } = run(DEFAULT_ALERT_RULES, () => healthy(), 300);
    expect(changes).toEqual([]);
    expect(active).toEqual([]);
  });

  it('fires decode KV > 90 % only after 30 s above, and resolves once it has been below for 30 s', () => {
    const { changes } = run(
      only('decode-kv-high'),
      (s) => ({ ...healthy(), 'decode.kv_ratio': s >= 10 && s < 70 ? 0.95 : 0.5 }),
      100,
    );
    expect(changes.map((c) => [c.type, c.sec])).toEqual([
      ['fired', 40],
      ['resolved', 100],
    ]);
    expect(changes[0].alert.role).toBe('decode');
    expect(changes[0].alert.detail).toContain('95 %');
  });

  it('with DP attention fires on the fullest dp rank, not on the summed usage', () => {
    // 81.4 % overall would never cross 90 %; rank 1 at 93 % is already refusing requests.
    const { changes } = run(
      only('decode-kv-high'),
      (s) => ({
        ...healthy(),
        'decode.kv_ratio': 0.814,
        'decode.kv_fullest_rank_ratio': s >= 10 ? 0.93 : 0.85,
      }),
      60,
    );
    expect(changes.map((c) => [c.type, c.sec])).toEqual([['fired', 40]]);
    expect(changes[0].alert.detail).toContain('81.4 %, its fullest dp rank at 93');
  });

  it('stays quiet when only the summed usage is high but the key of the fullest rank says otherwise', () => {
    // Cannot happen with real data (the fullest rank ≥ the sum); guards that the rule reads the rank key.
    const { changes } = run(
      only('decode-kv-high'),
      () => ({ ...healthy(), 'decode.kv_ratio': 0.95, 'decode.kv_fullest_rank_ratio': 0.5 }),
      60,
    );
    expect(changes).toEqual([]);
  });

  it('does not fire when the KV spike is shorter than the hold time', () => {
    const { changes } = run(
      only('decode-kv-high'),
      (s) => ({ ...healthy(), 'decode.kv_ratio': s >= 10 && s < 35 ? 0.99 : 0.5 }),
      60,
    );
    expect(changes).toEqual([]);
  });

  it('names the role of a service that is not active', () => {
    const { changes, active } = run(
      only('service-inactive'),
      (s) => ({ ...healthy(), 'prefill.active': s >= 3 ? 0 : 1 }),
      20,
    );
    expect(changes).toHaveLength(1);
    expect(changes[0].sec).toBe(8);
    expect(active[0]).toMatchObject({ ruleId: 'service-inactive', role: 'prefill', severity: 'error' });
  });

  it('reports a failing health check only while the unit is active', () => {
    const stopped = run(
      only('health-failing'),
      () => ({ ...healthy(), 'decode.active': 0, 'decode.health_ok': 0 }),
      60,
    );
    expect(stopped.changes).toEqual([]);
    const failing = run(only('health-failing'), () => ({ ...healthy(), 'decode.health_ok': 0 }), 60);
    expect(failing.changes[0]).toMatchObject({ type: 'fired', sec: 15 });
  });

  it('detects a restart loop from NRestarts rising 3 times within 10 minutes, not from old restarts', () => {
    // Restarts at 100 s, 200 s, 300 s → third one fires.
    const loop = run(
      only('restart-loop'),
      (s) => ({ ...healthy(), 'decode.restarts': s >= 300 ? 3 : s >= 200 ? 2 : s >= 100 ? 1 : 0 }),
      400,
    );
    expect(loop.changes[0]).toMatchObject({ type: 'fired', sec: 300 });
    expect(loop.changes[0].alert.detail).toContain('3 times in the last 10 min');
    // Spread over 25 minutes: never 3 within any 10-minute window.
    const slow = run(
      only('restart-loop'),
      (s) => ({ ...healthy(), 'decode.restarts': s >= 1500 ? 3 : s >= 800 ? 2 : s >= 100 ? 1 : 0 }),
      1600,
    );
    expect(slow.changes).toEqual([]);
  });

  it('says metrics are stale 15 s after the last successful scrape, and recovers after 10 s of them', () => {
    const { changes } = run(
      only('metrics-stale'),
      (s) => ({ ...healthy(), 'decode.metrics_ok': s >= 10 && s < 40 ? 0 : 1 }),
      60,
    );
    expect(changes.map((c) => [c.type, c.sec, c.alert.role])).toEqual([
      ['fired', 24, 'decode'],
      ['resolved', 50, 'decode'],
    ]);
  });

  it('counts KV transfer failures with counter-reset semantics', () => {
    const rising = run(
      only('transfer-failures'),
      (s) => ({ ...healthy(), 'prefill.transfer_failed_total': s >= 30 ? 4 : 2 }),
      40,
    );
    expect(rising.changes[0]).toMatchObject({ type: 'fired', sec: 30 });
    expect(rising.changes[0].alert.detail).toContain('2 bootstrap/transfer failures');
    // A restart resets the counter to 0: that is not a failure, and not a negative count either.
    const reset = run(
      only('transfer-failures'),
      (s) => ({ ...healthy(), 'prefill.transfer_failed_total': s >= 30 ? 0 : 7 }),
      40,
    );
    expect(reset.changes).toEqual([]);
    // One failure reads as one, not "1 … failures".
    const one = run(
      only('transfer-failures'),
      (s) => ({ ...healthy(), 'prefill.transfer_failed_total': s >= 30 ? 3 : 2 }),
      40,
    );
    expect(one.changes[0].alert.detail).toBe('1 bootstrap/transfer failure on prefill in the last 60 s');
  });

  it('fires queue-growing after two minutes of growth, not for a long but steady queue', () => {
    const growing = run(
      only('queue-growing'),
      (s) => ({ ...healthy(), 'prefill.queued': Math.floor(s / 10) }),
      200,
    );
    expect(growing.changes[0].type).toBe('fired');
    expect(growing.changes[0].sec).toBeGreaterThanOrEqual(108);
    expect(growing.changes[0].alert.role).toBe('prefill');
    const steady = run(only('queue-growing'), () => ({ ...healthy(), 'prefill.queued': 50 }), 300);
    expect(steady.changes).toEqual([]);
  });

  it('honours disabled rules, custom thresholds and deleted rules', () => {
    const custom: AlertRule[] = [
      { ...only('decode-kv-high')[0], threshold: 0.6, forS: 5 },
      { ...only('service-inactive')[0], enabled: false },
    ];
    const at = (s: number) => ({ ...healthy(), 'decode.kv_ratio': 0.7, 'router.active': s > 0 ? 0 : 1 });
    const first = run(custom, at, 20);
    expect(first.changes.map((c) => c.alert.ruleId)).toEqual(['decode-kv-high']);
    expect(first.changes[0].sec).toBe(5);
    // The rule is removed while firing: it must not stay active forever.
    const after = run([], at, 25, { state: first.state, fromS: 21 });
    expect(after.active).toEqual([]);
    expect(Object.keys(after.state.instances)).toEqual([]);
  });
});
