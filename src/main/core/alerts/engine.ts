// The alert rule engine: a pure step function. Given the rules, the previous state and the latest
// signal values at `ts`, it returns the next state and what changed (fired / resolved). No clock, no I/O:
// the dashboard service feeds it each poll and turns changes into timeline events.
import { QUEUE_SIGNALS } from '@shared/signals/spec';
import type { ActiveAlert, AlertRule } from '@shared/contract';
import type { Role } from '@shared/domain';
import type { FleetWorker } from '../signals/worker-names';
import { SERVER_ONLY_KINDS } from './rules';
import { failingHealth, namingWorkers } from './worker-texts';

export interface AlertInput {
  ts: number;
  roles: readonly Role[];
  /** Latest values by signal key (`decode.kv_ratio`, `prefill.active`, …). */
  values: Record<string, number | null | undefined>;
  /** A fleet's workers: a role's alert names the ones it is about. */
  workers?: readonly FleetWorker[];
}

interface Condition {
  /** When the condition became true (ms), null while false. */
  since: number | null;
  firing: boolean;
  firedAt?: number;
  title?: string;
  detail?: string;
}

/**
 * Recent (ts, value) points of one counter or queue, oldest first: `points[lo..hi)`. Consecutive states share
 * one list, each seeing its own range, and a step appends to the list in place when no later state has (the
 * newest state's range ends where the list does), so a poll neither copies the window (≈ 600 points a key) nor
 * changes what an earlier state holds. A step from an older state copies its range into a list of its own.
 */
export interface History {
  readonly points: Array<readonly [number, number]>;
  readonly lo: number;
  readonly hi: number;
}

export interface AlertState {
  conditions: Record<string, Condition>;
  /** Recent points of the counters and queues the windowed rules read. */
  history: Record<string, History>;
  /** Last time each role's /metrics answered, and when the role was first seen. */
  lastMetricsOk: Record<string, number>;
  firstSeen: Record<string, number>;
}

export interface AlertChange {
  type: 'fired' | 'resolved';
  alert: ActiveAlert;
}

export function initialAlertState(): AlertState {
  return { conditions: {}, history: {}, lastMetricsOk: {}, firstSeen: {} };
}

const MAX_HISTORY = 4000;
/** A shared list is copied once this many points have fallen out of its window (and at least as many remain). */
const COMPACT_AT = 1024;
const NO_HISTORY: History = { points: [], lo: 0, hi: 0 };

/** The points of a history, oldest first (a copy). */
export function historyPoints(h: History | undefined): Array<[number, number]> {
  return h ? (h.points.slice(h.lo, h.hi) as Array<[number, number]>) : [];
}

/** The points at or after `from` (a copy of the window's tail only, not of the whole window). */
function pointsSince(h: History | undefined, from: number): Array<[number, number]> {
  if (!h) return [];
  let lo = h.hi;
  while (lo > h.lo && h.points[lo - 1][0] >= from) lo--;
  return h.points.slice(lo, h.hi) as Array<[number, number]>;
}

const HOLD_KINDS: ReadonlySet<AlertRule['kind']> = new Set(['kv-high', 'service-inactive', 'health-failing']);

export function evaluateAlerts(
  rules: readonly AlertRule[],
  prev: AlertState,
  input: AlertInput,
): { state: AlertState; changes: AlertChange[]; active: ActiveAlert[] } {
  const { ts, values } = input;
  const val = (k: string): number | null => {
    const x = values[k];
    return x === undefined || x === null || !Number.isFinite(x) ? null : x;
  };
  const longestWindowMs =
    Math.max(600, ...rules.map((r) => Math.max(r.windowS ?? 0, r.forS ?? 0))) * 1000 + 5000;

  const state: AlertState = {
    conditions: { ...prev.conditions },
    history: { ...prev.history },
    lastMetricsOk: { ...prev.lastMetricsOk },
    firstSeen: { ...prev.firstSeen },
  };
  const record = (key: string, v: number | null): void => {
    const old = state.history[key] ?? NO_HISTORY;
    const points = old.points;
    // A history is in time order (each step keeps points before its own ts, then appends ts): what fell out of
    // the window is a prefix and what a replayed or earlier step left at or after ts a suffix, so the kept points
    // are one range, found without calling a predicate on every point of the window every poll.
    const cutoff = ts - longestWindowMs;
    let lo = old.lo;
    while (lo < old.hi && !(points[lo][0] >= cutoff)) lo++;
    let hi = old.hi;
    while (hi > lo && !(points[hi - 1][0] < ts)) hi--;
    if (v === null) {
      state.history[key] = { points, lo, hi };
      return;
    }
    // In place when this range ends the list and the dropped prefix is not most of it; else a list of its own
    // (a step from an older state, or time to let go of the points that fell out of the window).
    const own = hi === points.length && points !== NO_HISTORY.points && lo <= Math.max(COMPACT_AT, hi - lo);
    const list = own ? points : points.slice(lo, hi);
    if (!own) [lo, hi] = [0, hi - lo];
    list.push([ts, v]);
    hi++;
    state.history[key] = { points: list, lo: Math.max(lo, hi - MAX_HISTORY), hi };
  };
  for (const role of input.roles) {
    state.firstSeen[role] ??= ts;
    if (val(`${role}.metrics_ok`) === 1) state.lastMetricsOk[role] = ts;
    record(`${role}.restarts`, val(`${role}.restarts`));
    const failures = sumKnown([val(`${role}.transfer_failed_total`), val(`${role}.bootstrap_failed_total`)]);
    record(`${role}.failures`, failures);
    const queues = role === 'router' ? [] : QUEUE_SIGNALS[role];
    record(`${role}.queue`, sumKnown(queues.map((q) => val(`${role}.${q}`))));
  }

  const changes: AlertChange[] = [];
  const active: ActiveAlert[] = [];
  for (const rule of rules) {
    const roles = input.roles.filter(
      (r) =>
        (rule.roles.length === 0 || rule.roles.includes(r)) &&
        !(r === 'router' && SERVER_ONLY_KINDS.has(rule.kind)),
    );
    for (const role of roles) {
      const id = `${rule.id}|${role}`;
      const prevCond = state.conditions[id] ?? { since: null, firing: false };
      const found = rule.enabled ? checkRule(rule, role, state, val, ts, input.workers) : null;
      const check = found && input.workers ? namingWorkers(rule, role, found, input.workers, val) : found;
      let cond: Condition;
      if (!check) {
        cond = { since: null, firing: false };
        if (prevCond.firing) changes.push({ type: 'resolved', alert: toAlert(rule, role, prevCond, ts) });
      } else {
        const since = prevCond.since ?? ts;
        // Windowed rules carry their duration inside the check; state rules must hold for forS first.
        const holdS = HOLD_KINDS.has(rule.kind) ? (rule.forS ?? 0) : 0;
        const held = (ts - since) / 1000 >= holdS;
        cond = {
          since,
          firing: prevCond.firing || held,
          firedAt: prevCond.firedAt,
          title: check.title,
          detail: check.detail,
        };
        if (cond.firing && !prevCond.firing) {
          cond.firedAt = ts;
          changes.push({ type: 'fired', alert: toAlert(rule, role, cond, ts) });
        }
      }
      state.conditions[id] = cond;
      if (cond.firing) active.push(toAlert(rule, role, cond, ts));
    }
  }
  // Forget conditions of rules that no longer exist, so a deleted rule cannot stay "firing".
  const live = new Set(rules.flatMap((r) => input.roles.map((role) => `${r.id}|${role}`)));
  for (const id of Object.keys(state.conditions)) if (!live.has(id)) delete state.conditions[id];
  return { state, changes, active };
}

function toAlert(rule: AlertRule, role: Role, c: Condition, ts: number): ActiveAlert {
  return {
    ruleId: rule.id,
    role,
    severity: rule.severity,
    title: c.title ?? rule.id,
    detail: c.detail ?? '',
    since: c.firedAt ?? ts,
  };
}

type Check = { title: string; detail: string } | null;

function checkRule(
  rule: AlertRule,
  role: Role,
  state: AlertState,
  val: (k: string) => number | null,
  ts: number,
  fleet: readonly FleetWorker[] = [],
): Check {
  switch (rule.kind) {
    case 'kv-high': {
      const th = rule.threshold ?? 0.9;
      // With DP attention each dp rank has its own pool and a request is refused by the rank it lands on:
      // one rank at 95 % starts retracting while the summed usage may read 70 %. So the rule watches the
      // fullest rank (equal to the usage with one rank; older rows without the key fall back to the usage).
      const total = val(`${role}.kv_ratio`);
      const r = val(`${role}.kv_fullest_rank_ratio`) ?? total;
      if (r === null || r <= th) return null;
      const perRank = total !== null && r > total;
      return {
        title: `${role} KV cache above ${pct(th)}${perRank ? ' on a dp rank' : ''}`,
        detail: `${role} KV usage is ${perRank ? `${pct(total)}, its fullest dp rank at ${pct(r)}` : pct(r)} (threshold ${pct(th)} for ${rule.forS ?? 0} s); new requests will wait for KV slots or be retracted`,
      };
    }
    case 'service-inactive': {
      if (val(`${role}.active`) !== 0) return null;
      return {
        title: `${role} service is not active`,
        detail: `systemd reports the ${role} unit as not active; open its page for the journal and Result`,
      };
    }
    case 'health-failing': {
      // A fleet role is active only while every worker is: one stopped worker must not hide another that runs
      // but fails its check, so a fleet's rule asks each worker.
      const workers = fleet.filter((w) => w.role === role);
      const failing =
        workers.length > 0
          ? failingHealth(workers, role, val).length > 0
          : val(`${role}.active`) === 1 && val(`${role}.health_ok`) === 0;
      if (!failing) return null;
      return {
        title: `${role} health check failing`,
        detail: `${role} is active but its ${role === 'router' ? '/readiness' : '/health'} check fails (for ${rule.forS ?? 0} s)`,
      };
    }
    case 'restart-loop': {
      const windowS = rule.windowS ?? 600;
      const th = rule.threshold ?? 3;
      const inc = increaseWithin(state.history[`${role}.restarts`], ts - windowS * 1000);
      if (inc < th) return null;
      return {
        title: `${role} is restarting in a loop`,
        detail: `systemd restarted ${role} ${inc} times in the last ${span(windowS)} (NRestarts rising)`,
      };
    }
    case 'metrics-stale': {
      const staleS = rule.forS ?? 15;
      const last = state.lastMetricsOk[role] ?? state.firstSeen[role];
      const age = (ts - last) / 1000;
      if (age <= staleS) return null;
      return {
        title: `${role} metrics stale`,
        detail: state.lastMetricsOk[role]
          ? `no successful /metrics scrape of ${role} for ${Math.round(age)} s; charts stop here`
          : `${role} /metrics has not answered since monitoring started (${Math.round(age)} s)`,
      };
    }
    case 'transfer-failures': {
      const windowS = rule.windowS ?? 60;
      const th = rule.threshold ?? 1;
      const inc = increaseWithin(state.history[`${role}.failures`], ts - windowS * 1000);
      if (inc < th) return null;
      return {
        title: `KV transfer failures rising on ${role}`,
        detail: `${inc} bootstrap/transfer failure${inc === 1 ? '' : 's'} on ${role} in the last ${span(windowS)}`,
      };
    }
    case 'queue-growing': {
      const forS = rule.forS ?? 120;
      const th = rule.threshold ?? 5;
      const h = pointsSince(state.history[`${role}.queue`], ts - forS * 1000);
      if (h.length < 3 || (h[h.length - 1][0] - h[0][0]) / 1000 < forS * 0.9) return null;
      const growth = h[h.length - 1][1] - h[0][1];
      if (growth < th || !(slope(h) > 0)) return null;
      return {
        title: `${role} queue growing`,
        detail: `${role} queues grew from ${h[0][1]} to ${h[h.length - 1][1]} requests over ${span(forS)}`,
      };
    }
  }
}

/** Counter increase since `from` with Prometheus reset semantics (a drop means the counter restarted). */
function increaseWithin(h: History | undefined, from: number): number {
  if (!h || h.hi - h.lo < 2) return 0;
  let inc = 0;
  let prev: number | null = null;
  for (let k = h.lo; k < h.hi; k++) {
    // Indexed, not destructured: a destructuring pattern may go through the iterator protocol per point.
    const t = h.points[k][0];
    const v = h.points[k][1];
    if (t < from) {
      prev = v;
      continue;
    }
    if (prev !== null) inc += v >= prev ? v - prev : v;
    prev = v;
  }
  return inc;
}

function slope(h: Array<[number, number]>): number {
  const n = h.length;
  const mx = h.reduce((s, [t]) => s + t, 0) / n;
  const my = h.reduce((s, [, v]) => s + v, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [t, v] of h) {
    sxy += (t - mx) * (v - my);
    sxx += (t - mx) ** 2;
  }
  return sxx > 0 ? sxy / sxx : 0;
}

function sumKnown(xs: Array<number | null>): number | null {
  let t: number | null = null;
  for (const x of xs) if (x !== null) t = (t ?? 0) + x;
  return t;
}

function pct(r: number): string {
  return `${Math.round(r * 1000) / 10} %`;
}

function span(s: number): string {
  return s % 60 === 0 && s >= 120 ? `${s / 60} min` : `${s} s`;
}
