// A fleet's role alerts name the workers they are about, with their hosts: the rules watch the role's aggregate
// (its fullest worker's KV, up only while every worker is), so "decode KV cache above 90 %" alone leaves the
// operator to find which of the decode workers is full. The same values without workers (a one-host pair) keep
// the rule's own text.
import { describe, expect, it } from 'vitest';
import { evaluateAlerts, initialAlertState, type AlertState } from '../../src/main/core/alerts/engine';
import { DEFAULT_ALERT_RULES } from '../../src/main/core/alerts/rules';
import type { ActiveAlert } from '../../src/shared/contract';
import type { Role } from '../../src/shared/domain';
import type { FleetWorker } from '@shared/worker-names';
import { DEMO_FLEET_WORKERS as WORKERS } from '../support/fleet-workers';

const ROLES: Role[] = ['router', 'prefill', 'decode'];
const T0 = 1_800_000_000_000;

/** Every worker up and scraped, decode KV at 20/40/55 % (the role's aggregate as the store makes it). */
function fleet(over: Record<string, number | null> = {}): Record<string, number | null> {
  const v: Record<string, number | null> = {};
  for (const w of WORKERS) {
    v[`${w.role}.active@${w.id}`] = 1;
    v[`${w.role}.health_ok@${w.id}`] = 1;
    v[`${w.role}.metrics_ok@${w.id}`] = 1;
    v[`${w.role}.restarts@${w.id}`] = 0;
  }
  Object.assign(v, {
    'decode.kv_ratio@decode-0': 0.2,
    'decode.kv_ratio@decode-1': 0.4,
    'decode.kv_ratio@decode-2': 0.55,
  });
  Object.assign(v, over);
  // The role aggregate: up only while every worker is, the fullest worker's KV, restarts summed.
  for (const r of ROLES) {
    const ws = WORKERS.filter((w) => w.role === r);
    for (const k of ['active', 'health_ok', 'metrics_ok'])
      v[`${r}.${k}`] = Math.min(...ws.map((w) => v[`${r}.${k}@${w.id}`] ?? 0));
    v[`${r}.restarts`] = ws.reduce((t, w) => t + (v[`${r}.restarts@${w.id}`] ?? 0), 0);
  }
  v['decode.kv_fullest_rank_ratio'] = Math.max(
    ...WORKERS.filter((w) => w.role === 'decode').map((w) => v[`decode.kv_ratio@${w.id}`] ?? 0),
  );
  v['decode.kv_ratio'] = 0.38;
  return v;
}

/** One poll a second for `s` seconds of the default rules; the alerts active at the end. */
function activeAfter(
  values: Record<string, number | null>,
  s: number,
  workers?: FleetWorker[],
): ActiveAlert[] {
  let state: AlertState = initialAlertState();
  let active: ActiveAlert[] = [];
  for (let sec = 0; sec <= s; sec++) {
    const r = evaluateAlerts(DEFAULT_ALERT_RULES, state, {
      ts: T0 + sec * 1000,
      roles: ROLES,
      values,
      workers,
    });
    state = r.state;
    active = r.active;
  }
  return active;
}

describe('fleet alerts', () => {
  it('decode KV above the threshold names the full worker, its hosts and figure, and how the rest stand', () => {
    const values = fleet({ 'decode.kv_ratio@decode-2': 0.97 });
    const [kv] = activeAfter(values, 31, WORKERS).filter((a) => a.ruleId === 'decode-kv-high');
    expect(kv.title).toBe('decode KV cache above 90 %: decode-2 on gpu-b+gpu-c (97 %)');
    expect(kv.detail).toBe(
      "decode-2 on gpu-b+gpu-c at 97 % (threshold 90 % for 30 s), other decode workers at most 40 %, 38 % of the role's KV overall; new requests there will wait for KV slots or be retracted",
    );
    // The same figures on a one-host pair: the rule's own text, as today.
    const [pair] = activeAfter(values, 31).filter((a) => a.ruleId === 'decode-kv-high');
    expect(pair.title).toBe('decode KV cache above 90 % on a dp rank');
  });

  it('one decode worker stopped: the inactive alert names it and says how many still serve', () => {
    const [down] = activeAfter(fleet({ 'decode.active@decode-1': 0 }), 6, WORKERS).filter(
      (a) => a.ruleId === 'service-inactive',
    );
    expect(down.role).toBe('decode');
    expect(down.title).toBe('decode service is not active: decode-1 on gpu-b');
    expect(down.detail).toBe(
      'systemd reports the unit of decode-1 on gpu-b as not active; 2 of 3 decode workers serve; open its page for the journal and Result',
    );
  });

  it('every decode worker stopped: one alert naming them all once', () => {
    const values = fleet({
      'decode.active@decode-0': 0,
      'decode.active@decode-1': 0,
      'decode.active@decode-2': 0,
    });
    const down = activeAfter(values, 6, WORKERS).filter((a) => a.ruleId === 'service-inactive');
    expect(down.map((a) => a.title)).toEqual([
      'decode service is not active: decode-0, decode-1, decode-2 (gpu-b, gpu-c)',
    ]);
    expect(down[0].detail).toBe(
      'systemd reports the units of decode-0, decode-1, decode-2 (gpu-b, gpu-c) as not active; 0 of 3 decode workers serve; open their pages for the journal and Result',
    );
  });

  it('what still serves excludes a worker failing its health check (a multi-node worker missing its rank-1 unit)', () => {
    const values = fleet({ 'decode.active@decode-0': 0, 'decode.health_ok@decode-2': 0 });
    const [down] = activeAfter(values, 6, WORKERS).filter((a) => a.ruleId === 'service-inactive');
    expect(down.detail).toContain('; 1 of 3 decode workers serve;');
  });

  it('a worker failing its health check is alerted while another worker of its role is stopped', () => {
    const values = fleet({ 'decode.active@decode-0': 0, 'decode.health_ok@decode-1': 0 });
    const titles = activeAfter(values, 20, WORKERS).map((a) => a.title);
    expect(titles).toContain('decode service is not active: decode-0 on gpu-b');
    expect(titles).toContain('decode health check failing: decode-1 on gpu-b');
  });

  it('a prefill worker failing its health check, and a decode worker whose /metrics stopped answering', () => {
    const values = fleet({ 'prefill.health_ok@prefill-1': 0, 'decode.metrics_ok@decode-0': 0 });
    const titles = activeAfter(values, 20, WORKERS).map((a) => a.title);
    expect(titles).toContain('prefill health check failing: prefill-1 on gpu-a');
    expect(titles).toContain('decode metrics stale: decode-0 on gpu-b');
  });
});
