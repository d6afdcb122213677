// What each rule kind reads in one poll's values for one target (a unit, or a role as a whole): whether its
// condition holds, whether it still holds within the hysteresis band, or that there is no fresh data to say
// either. The state machine (engine.ts) decides what that means for the alert; a reading never resolves anything.
import type { AlertRule } from '@shared/contract';
import type { Role } from '@shared/domain';
import { workerName, type FleetWorker } from '@shared/worker-names';
import { increaseWithin, pointsSince, risenSince, slope, type History, type Rises } from './history';
import { marginOf } from './rules';

/** What one alert instance is about: one unit (a pair's role, a fleet's worker) or a role as a whole. */
export interface AlertTarget {
  role: Role;
  /** Suffix of its series keys: '' for a pair's role or a role's aggregate, '@decode-1' for a fleet worker. */
  scope: string;
  /** The fleet worker it is (absent for a pair's role and for a role as a whole). */
  worker?: FleetWorker;
  /** A host's link: the fleet workers on the host. */
  on?: readonly string[];
}

export interface AlertText {
  title: string;
  detail: string;
}

/**
 * One poll's word on a condition. `fire`: it holds (an inactive alert starts pending); `hold`: it holds within
 * the hysteresis band (a firing alert stays). `since`: when it began to hold, where the data says (the last
 * successful scrape of a stale target); the engine counts the hold time from there instead of from this poll.
 */
export type Reading =
  | { data: false; reason: string }
  | { data: true; fire: boolean; hold: boolean; since?: number; value?: number; text?: AlertText };

export interface ReadContext {
  ts: number;
  val: (key: string) => number | null;
  history: Readonly<Record<string, History>>;
  /** Per unit (`decode@decode-1`): its NRestarts and their rises. */
  restarts: Readonly<Record<string, Rises>>;
  /**
   * Since when the target's metrics have not answered: their last answer, or when the target was first seen
   * (`never`), or when its host's link came back if that is later (an outage of the link is its own alert).
   */
  staleSince: (target: AlertTarget) => { since: number; never: boolean };
  /** Why the target cannot be read now (its host's link is down), or null. */
  unreachable: (target: AlertTarget) => string | null;
  /** The earliest time a window may count from: the end of the last restart by this console it is about. */
  watchedFrom: (rule: AlertRule, target: AlertTarget) => number;
}

/** The series key of a target: `decode.kv_ratio`, `decode.kv_ratio@decode-1`. */
export const keyOf = (t: AlertTarget, signal: string): string => `${t.role}.${signal}${t.scope}`;

/** The target in words: "decode", "decode-1 on gpu-b". */
export const nameOf = (t: AlertTarget): string => (t.worker ? workerName(t.worker) : t.role);

const CLEAR: Reading = Object.freeze({ data: true, fire: false, hold: false });
const clear = (): Reading => CLEAR;
const noData = (reason: string): Reading => ({ data: false, reason });
/** The condition holds, with what it says and, where there is one, its figure and since when. */
const holds = (title: string, detail: string, extra: { value?: number; since?: number } = {}): Reading => ({
  data: true,
  fire: true,
  hold: true,
  ...extra,
  text: { title, detail },
});

export function readCondition(rule: AlertRule, t: AlertTarget, c: ReadContext): Reading {
  const down = c.unreachable(t);
  if (down) return noData(down);
  const { val, ts } = c;
  switch (rule.kind) {
    case 'kv-high': {
      if (val(keyOf(t, 'metrics_ok')) !== 1) return noData(`no successful /metrics scrape of ${nameOf(t)}`);
      const th = rule.threshold ?? 0.9;
      const below = th - marginOf(rule);
      // With DP attention each dp rank has its own pool and a request is refused by the rank it lands on:
      // one rank at 95 % starts retracting while the summed usage may read 70 %. So the rule watches the
      // fullest rank (equal to the usage with one rank; older rows without the key fall back to the usage).
      const total = val(keyOf(t, 'kv_ratio'));
      const r = val(keyOf(t, 'kv_fullest_rank_ratio')) ?? total;
      if (r === null) return noData(`${nameOf(t)} reports no KV usage`);
      if (r < below) return clear();
      const perRank = total !== null && r > total;
      return {
        data: true,
        fire: r >= th,
        hold: true,
        value: r,
        text: {
          title: `${t.role} KV cache above ${pct(th)}${perRank ? ' on a dp rank' : ''}`,
          detail:
            `${nameOf(t)} KV usage is ${perRank ? `${pct(total)}, its fullest dp rank at ${pct(r)}` : pct(r)} (threshold ${pct(th)} for ${rule.forS ?? 0} s` +
            (r < th ? `; clears below ${pct(below)}` : '') +
            `); new requests will wait for KV slots or be retracted`,
        },
      };
    }
    case 'service-inactive': {
      const active = val(keyOf(t, 'active'));
      if (active === null) return noData(`systemd state of ${nameOf(t)} unknown`);
      if (active !== 0) return clear();
      return holds(
        `${t.role} service is not active`,
        `systemd reports the ${nameOf(t)} unit as not active; open its page for the journal and Result`,
      );
    }
    case 'health-failing': {
      const active = val(keyOf(t, 'active'));
      const health = val(keyOf(t, 'health_ok'));
      if (active === null || health === null) return noData(`state or health of ${nameOf(t)} unknown`);
      if (!(active === 1 && health === 0)) return clear();
      return holds(
        `${t.role} health check failing`,
        `${nameOf(t)} is active but its ${t.role === 'router' ? '/readiness' : '/health'} check fails (for ${rule.forS ?? 0} s)`,
      );
    }
    case 'restart-loop': {
      if (val(keyOf(t, 'restarts')) === null) return noData(`systemd state of ${nameOf(t)} unknown`);
      const windowS = rule.windowS ?? 600;
      const th = rule.threshold ?? 3;
      const inc = risenSince(
        c.restarts[`${t.role}${t.scope}`],
        Math.max(ts - windowS * 1000, c.watchedFrom(rule, t)),
      );
      if (inc < th) return clear();
      return holds(
        `${t.role} is restarting in a loop`,
        `systemd restarted ${nameOf(t)} ${inc} times in the last ${span(windowS)} (NRestarts rising)`,
        { value: inc },
      );
    }
    case 'metrics-stale': {
      if (val(keyOf(t, 'metrics_ok')) === 1) return clear();
      const { since, never } = c.staleSince(t);
      const age = Math.round((ts - since) / 1000);
      return holds(
        `${t.role} metrics stale`,
        never
          ? `${nameOf(t)} /metrics has not answered since monitoring started (${age} s)`
          : `no successful /metrics scrape of ${nameOf(t)} for ${age} s; charts stop here`,
        { since, value: age },
      );
    }
    case 'transfer-failures': {
      if (val(keyOf(t, 'metrics_ok')) !== 1)
        return noData(`no successful /metrics scrape of every ${t.role} server`);
      const windowS = rule.windowS ?? 60;
      const th = rule.threshold ?? 1;
      const inc = increaseWithin(
        c.history[keyOf(t, 'failures')],
        Math.max(ts - windowS * 1000, c.watchedFrom(rule, t)),
      );
      if (inc < th) return clear();
      return holds(
        `KV transfer failures rising on ${t.role}`,
        `${inc} bootstrap/transfer failure${inc === 1 ? '' : 's'} on ${t.role} in the last ${span(windowS)}`,
        { value: inc },
      );
    }
    case 'queue-growing':
      return queueGrowing(rule, t, c);
  }
}

/**
 * The queue grows when the least-squares trend of the role's summed queues over the window (the rule's forS,
 * 120 s by default) rises by at least the threshold over that window; the trend of every poll in the window, not
 * the difference of its two ends, so one poll's jitter neither starts nor ends it. It keeps firing while the
 * trend rises by more than threshold − margin (by default half the threshold). The window must be covered by
 * fresh scrapes (90 % of it, every server of the role read at this poll), else there is no data.
 */
function queueGrowing(rule: AlertRule, t: AlertTarget, c: ReadContext): Reading {
  const { ts, val } = c;
  if (val(keyOf(t, 'metrics_ok')) !== 1)
    return noData(`no successful /metrics scrape of every ${t.role} server`);
  const windowS = rule.forS ?? 120;
  const th = rule.threshold ?? 5;
  const h = pointsSince(c.history[keyOf(t, 'queue')], Math.max(ts - windowS * 1000, c.watchedFrom(rule, t)));
  const last = h[h.length - 1];
  if (h.length < 3 || last[0] !== ts || (last[0] - h[0][0]) / 1000 < windowS * 0.9)
    return noData(`fewer than ${span(Math.round(windowS * 0.9))} of ${t.role} queue readings so far`);
  const growth = slope(h) * windowS * 1000;
  const fire = growth >= th;
  const hold = growth > th - marginOf(rule);
  if (!hold) return clear();
  return {
    data: true,
    fire,
    hold,
    value: growth,
    text: {
      title: `${t.role} queue growing`,
      detail: `${t.role} queues grew by ${fmt(growth)} requests over ${span(windowS)} (trend of ${h.length} readings), ${fmt(last[1])} now`,
    },
  };
}

export function pct(r: number): string {
  return `${Math.round(r * 1000) / 10} %`;
}

export function span(s: number): string {
  return s % 60 === 0 && s >= 120 ? `${s / 60} min` : `${s} s`;
}

export function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
