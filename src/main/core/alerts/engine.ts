// The alert rule engine: a pure step function. Given the rules, the previous state and one poll's values (with
// the state of the links to the hosts and the units this console is restarting) at `ts`, it returns the next
// state and what changed. No clock, no I/O: the dashboard service feeds it each poll and turns changes into
// timeline events and notifications.
//
// The states are Prometheus' and Alertmanager's. Each rule has an instance per unit (a pair's role, a fleet's
// worker) or per role for the rules that read a role as a whole, and per host for a lost link:
//   inactive → pending (the condition holds) → firing (it held for the rule's forS) → resolved (fresh data showed
//   it clear — below threshold − margin — for the rule's clearForS).
// A poll without data for an instance (its host unreachable, its /metrics failing) leaves a firing instance
// firing, marked "no data since …", and drops a pending one; nothing resolves on missing data. Editing a rule
// re-reads its instances under the new settings; switching it off or deleting it ends them ("ended", not
// "resolved"). Instances of a rule and role are one alert (a group) naming its workers. One cause, one alert:
// a host's lost link is one alert and makes every instance on the host read "no data" instead of firing its
// own; a firing restart loop or stopped unit holds back the stale-metrics and health alerts of the same unit;
// an instance that begins firing while this console restarts its unit is "expected" and not notified, and once
// the restart ends it is watched afresh (pending for forS) and fires, notified, only if it still holds.
import type { ActiveAlert, AlertRule } from '@shared/contract';
import type { Role } from '@shared/domain';
import type { RestartingUnit } from '../actions/restarting';
import { workerList, type FleetWorker } from '@shared/worker-names';
import { QUEUE_SIGNALS } from '@shared/signals/spec';
import { clearForS, SERVER_ONLY_KINDS } from './rules';
import { readCondition, keyOf, type AlertTarget, type AlertText, type Reading } from './conditions';
import { recorded, rose, type History, type Rises } from './history';
import { groupText, type Member } from './worker-texts';

export { historyPoints, type History } from './history';

/** The link to one host as the connection reports it. */
export interface AlertLink {
  hostId: string;
  /** How the operator knows the host ("gpu-b"). */
  label: string;
  /** Connected and answering; a stale, reconnecting or failed link is down. */
  up: boolean;
  /** When the outage began, where the connection knows it. */
  since?: number;
  /** Its state in words: "reconnecting, attempt 5 (last error: timed out)". */
  detail?: string;
}

/** A unit this console is restarting now (a restart, a roll's current worker). */
export type AlertRestart = RestartingUnit;

export interface AlertInput {
  ts: number;
  roles: readonly Role[];
  /** Latest values by signal key (`decode.kv_ratio`, `prefill.active`, …). */
  values: Record<string, number | null | undefined>;
  /** A fleet's workers: each is a unit of its own, and a role's alert names the ones it is about. */
  workers?: readonly FleetWorker[];
  /** The links to the deployment's hosts; absent: every host reachable. */
  links?: readonly AlertLink[];
  /** Units this console is restarting now. */
  restarting?: readonly AlertRestart[];
}

/** Why an instance is held back from notifying: a restart by this console, or another alert of its unit. */
interface Mute {
  by: 'restart' | 'alert';
  text: string;
}

interface Instance {
  group: string;
  target: AlertTarget;
  phase: 'pending' | 'firing';
  /** When the condition began to hold (the pending clock). */
  activeSince: number;
  firedAt?: number;
  /** While firing: since when fresh data has shown the condition clear; null while it holds. */
  clearSince: number | null;
  /** The last poll with data for it. */
  lastDataAt: number;
  /** No data since `since` (its last poll with data), and why; null with data. */
  noData: { since: number; reason: string } | null;
  /** Its last reading with data while the condition held. */
  value?: number;
  text: AlertText;
  /** It began firing while muted: never notified. */
  quiet: boolean;
  mute?: Mute;
}

interface Group {
  ruleId: string;
  role?: Role;
  host?: string;
  firedAt: number;
  /** A notification went out for this episode. */
  notified: boolean;
  /** Its members' instance keys, sorted. */
  members: string[];
  alert: ActiveAlert;
}

export interface AlertState {
  instances: Record<string, Instance>;
  groups: Record<string, Group>;
  /** Recent points of the failure counters and queues the windowed rules read, per role. */
  history: Record<string, History>;
  /** Per unit (`decode`, `decode@decode-1`): its NRestarts and their rises in the longest window. */
  restarts: Record<string, Rises>;
  /**
   * Per unit (`decode`, `decode@decode-1`) whose /metrics did not answer at the last poll: since when (the poll
   * before, which it answered, or when it was first seen, `never`). Changed only when a unit's state does.
   */
  silent: Record<string, { since: number; never: boolean }>;
  /** Every unit seen so far. */
  seen: Record<string, true>;
  /** The previous poll's time. */
  lastTs: number | null;
  /** Units this console was restarting at the previous poll. */
  restarting: Record<string, true>;
  /** Per unit: when the last restart of it by this console ended (kept for the longest window). */
  calm: Record<string, number>;
  /** Per host: since when its link is down (null while up), and when it last came back (null if never lost). */
  links: Record<string, { downSince: number | null; upSince: number | null }>;
}

export interface AlertChange {
  /**
   * fired: an alert began (or, after a quiet start, fires normally); resolved: fresh data showed it clear;
   * ended: its rule was switched off or deleted, its unit left the deployment, or the restart that made it
   * expected ended (it is watched afresh); updated: the workers it is about changed.
   */
  type: 'fired' | 'resolved' | 'ended' | 'updated';
  alert: ActiveAlert;
  /** Worth a toast and a desktop notification. */
  notify: boolean;
  /** ended, updated: why, in words. */
  reason?: string;
}

export interface AlertStep {
  state: AlertState;
  changes: AlertChange[];
  /** Firing alerts (expected and no-data ones included). */
  active: ActiveAlert[];
  /** Alerts whose condition holds, not yet for their hold time. */
  pending: ActiveAlert[];
}

export function initialAlertState(): AlertState {
  return {
    instances: {},
    groups: {},
    history: {},
    restarts: {},
    silent: {},
    seen: {},
    lastTs: null,
    restarting: {},
    calm: {},
    links: {},
  };
}

/** The scope of a host's link instance (`#gpu-b`): no series key has it. */
const HOST = '#';
const isHost = (t: AlertTarget): boolean => t.scope.startsWith(HOST);

/** Rule kinds with an instance per unit; the others read a role as a whole. */
const PER_UNIT: ReadonlySet<AlertRule['kind']> = new Set([
  'kv-high',
  'service-inactive',
  'health-failing',
  'restart-loop',
  'metrics-stale',
]);

/**
 * Kinds whose condition must hold for the rule's forS before they fire (here: the hold when a rule has no forS);
 * the others carry their window in the reading and fire on it.
 */
const HOLD_S: Partial<Record<AlertRule['kind'], number>> = {
  'kv-high': 0,
  'service-inactive': 0,
  'health-failing': 0,
  'metrics-stale': 15,
};

function holdMs(rule: AlertRule): number {
  const d = HOLD_S[rule.kind];
  return d === undefined ? 0 : (rule.forS ?? d) * 1000;
}

/**
 * Inhibition within a unit, as Alertmanager's inhibit rules: while an alert of the key kind fires for a unit, the
 * listed kinds of the same unit that begin firing are held back (a crash loop stops the unit, which stops its
 * /metrics and health; the loop is the alert).
 */
const INHIBITS: Partial<Record<AlertRule['kind'], readonly AlertRule['kind'][]>> = {
  'restart-loop': ['service-inactive', 'health-failing', 'metrics-stale'],
  'service-inactive': ['health-failing', 'metrics-stale'],
};

export function evaluateAlerts(rules: readonly AlertRule[], prev: AlertState, input: AlertInput): AlertStep {
  const { ts, values } = input;
  const val = (k: string): number | null => {
    const x = values[k];
    return x === undefined || x === null || !Number.isFinite(x) ? null : x;
  };
  const fleet = input.workers ?? [];
  const state: AlertState = {
    instances: {},
    groups: { ...prev.groups },
    history: { ...prev.history },
    // Copied when a unit's entry changes (a fleet has dozens of units, and most polls change none of them).
    restarts: prev.restarts,
    silent: prev.silent,
    seen: prev.seen,
    lastTs: ts,
    restarting: prev.restarting,
    calm: prev.calm,
    links: { ...prev.links },
  };

  // The links: when each went down (the connection's word, else the first poll that saw it down) and came back.
  const links = new Map<string, AlertLink>();
  for (const l of input.links ?? []) {
    links.set(l.hostId, l);
    const was = state.links[l.hostId];
    if (l.up)
      state.links[l.hostId] = {
        downSince: null,
        upSince: was?.downSince !== null && was?.downSince !== undefined ? ts : (was?.upSince ?? null),
      };
    else
      state.links[l.hostId] = {
        downSince: Math.min(was?.downSince ?? ts, l.since ?? ts, ts),
        upSince: was?.upSince ?? null,
      };
  }
  for (const id of Object.keys(state.links)) if (!links.has(id)) delete state.links[id];

  // The units: a fleet's workers, else a pair's roles; each on its hosts (a pair's on every link's host).
  const units: AlertTarget[] =
    fleet.length > 0
      ? fleet
          .filter((w) => input.roles.includes(w.role))
          .map((w) => ({ role: w.role, scope: `@${w.id}`, worker: w }))
      : input.roles.map((role) => ({ role, scope: '' }));
  const byRole = new Map<Role, AlertTarget[]>();
  for (const u of units) {
    const list = byRole.get(u.role);
    if (list) list.push(u);
    else byRole.set(u.role, [u]);
  }
  const unitsOf = (role: Role): AlertTarget[] => byRole.get(role) ?? [];
  const allHosts = [...links.keys()];
  const roleHosts = new Map<Role, string[]>();
  const hostsOf = (t: AlertTarget): readonly string[] => {
    if (t.worker) return t.worker.hosts ?? [];
    if (fleet.length === 0) return allHosts;
    let hs = roleHosts.get(t.role);
    if (!hs)
      roleHosts.set(t.role, (hs = [...new Set(unitsOf(t.role).flatMap((u) => u.worker?.hosts ?? []))]));
    return hs;
  };
  // Asked by every rule of a unit: worked out once per unit and poll.
  const unreachableOf = new Map<string, string | null>();
  const unreachable = (t: AlertTarget): string | null => {
    const k = t.scope || t.role;
    let why = unreachableOf.get(k);
    if (why !== undefined) return why;
    why = null;
    for (const h of hostsOf(t)) {
      const l = links.get(h);
      if (l && !l.up) {
        why = `${l.label} unreachable${l.detail ? ` (${l.detail})` : ''}`;
        break;
      }
    }
    unreachableOf.set(k, why);
    return why;
  };
  const unitKey = (t: AlertTarget): string => `${t.role}${t.scope}`;
  const namesOn = (on: readonly AlertTarget[]): string =>
    fleet.length > 0
      ? workerList(on.flatMap((u) => (u.worker ? [u.worker] : [])))
      : on.map((u) => u.role).join(', ');

  const longestWindowMs =
    Math.max(600, ...rules.map((r) => Math.max(r.windowS ?? 0, r.forS ?? 0))) * 1000 + 5000;
  for (const u of units) {
    const k = unitKey(u);
    const known = prev.seen[k] === true;
    if (!known) {
      if (state.seen === prev.seen) state.seen = { ...prev.seen };
      state.seen[k] = true;
    }
    const answered = val(keyOf(u, 'metrics_ok')) === 1;
    if (answered === (prev.silent[k] !== undefined)) {
      if (state.silent === prev.silent) state.silent = { ...prev.silent };
      if (answered) delete state.silent[k];
      else
        state.silent[k] =
          known && prev.lastTs !== null ? { since: prev.lastTs, never: false } : { since: ts, never: true };
    }
    const r = rose(prev.restarts[k], ts, val(keyOf(u, 'restarts')), longestWindowMs);
    if (r && r !== prev.restarts[k]) {
      if (state.restarts === prev.restarts) state.restarts = { ...prev.restarts };
      state.restarts[k] = r;
    }
  }
  for (const role of input.roles) {
    // A role's sums are fresh only when every server of the role was scraped at this poll (a fleet's aggregate
    // `metrics_ok` is 1 only then): a sum over the servers that answered would read a lost one as a drop.
    const fresh = val(`${role}.metrics_ok`) === 1;
    const failures = fresh
      ? sumKnown([val(`${role}.transfer_failed_total`), val(`${role}.bootstrap_failed_total`)])
      : null;
    state.history[`${role}.failures`] = recorded(
      state.history[`${role}.failures`],
      ts,
      failures,
      longestWindowMs,
    );
    const queues = role === 'router' ? [] : QUEUE_SIGNALS[role];
    const queue = fresh ? sumKnown(queues.map((q) => val(`${role}.${q}`))) : null;
    state.history[`${role}.queue`] = recorded(state.history[`${role}.queue`], ts, queue, longestWindowMs);
  }

  // What an instance is about: its unit; a role read as a whole is about every unit of the role, and transfer
  // failures about the other side of the PD pair too. A host's link is about no unit.
  const concernedOf = (rule: AlertRule, target: AlertTarget): AlertTarget[] => {
    if (isHost(target)) return [];
    const other: Role | null =
      rule.kind !== 'transfer-failures' || target.role === 'router'
        ? null
        : target.role === 'prefill'
          ? 'decode'
          : 'prefill';
    const peers = other === null ? [] : fleet.length > 0 ? unitsOf(other) : [{ role: other, scope: '' }];
    return PER_UNIT.has(rule.kind) || fleet.length === 0
      ? [target, ...peers]
      : [...unitsOf(target.role), ...peers];
  };
  /** The restart covering a unit: one of it now (`current`), or any operation it is part of (a roll of its role). */
  const restartOf = (u: AlertTarget, current = true): AlertRestart | undefined =>
    input.restarting?.find(
      (r) =>
        (r.current || !current) && r.role === u.role && (r.worker === undefined || r.worker === u.worker?.id),
    );
  // A role whose every unit this console is restarting: the router cannot serve without it (its readiness
  // fails), so the router's alerts are that restart's too. With another worker of the role left, they are not.
  const emptiedRole = (): (AlertRestart & { role: Role }) | undefined => {
    for (const role of ['prefill', 'decode'] as const) {
      const of = unitsOf(role).map((u) => restartOf(u));
      if (of.length > 0 && of.every((r) => r !== undefined)) return { ...of[0]!, role };
    }
    return undefined;
  };
  // When each unit's last restart by this console ended: what a window counted during it (the failures, the
  // restarts, the queue it caused) is that restart's, so a window starts no earlier than its end.
  const restartingNow = new Set(units.filter((u) => restartOf(u, false) !== undefined).map(unitKey));
  for (const k of Object.keys(prev.restarting))
    if (!restartingNow.has(k)) {
      if (state.calm === prev.calm) state.calm = { ...prev.calm };
      state.calm[k] = ts;
    }
  for (const [k, at] of Object.entries(state.calm))
    if (at < ts - longestWindowMs) {
      if (state.calm === prev.calm) state.calm = { ...prev.calm };
      delete state.calm[k];
    }
  if (
    restartingNow.size !== Object.keys(prev.restarting).length ||
    [...restartingNow].some((k) => !prev.restarting[k])
  )
    state.restarting = Object.fromEntries([...restartingNow].map((k) => [k, true as const]));
  // The first poll after the end is the baseline, not a count: what it reports (a counter read once more) may
  // have happened before the end.
  const watchedFrom = (rule: AlertRule, t: AlertTarget): number => {
    let from = -Infinity;
    for (const u of concernedOf(rule, t)) from = Math.max(from, state.calm[unitKey(u)] ?? -Infinity);
    return from + 1;
  };

  const ctx = {
    ts,
    val,
    history: state.history,
    restarts: state.restarts,
    unreachable,
    watchedFrom,
    staleSince: (t: AlertTarget) => {
      const silent = state.silent[unitKey(t)] ?? { since: ts, never: false };
      let since = silent.since;
      // An outage of the link is the link's alert: staleness counts from when the link came back.
      for (const h of hostsOf(t)) since = Math.max(since, state.links[h]?.upSince ?? -Infinity);
      return { since, never: silent.never };
    },
  };

  // Every instance steps through the state machine on this poll's reading.
  const evaluated = new Map<string, { rule: AlertRule; target: AlertTarget }>();
  const resolvedNow = new Set<string>();
  const stepOne = (key: string, group: string, rule: AlertRule, target: AlertTarget, r: Reading): void => {
    const before = prev.instances[key];
    // Most readings of most units are clear with nothing pending: nothing to step or remember.
    if (!before && !(r.data && r.fire)) return;
    evaluated.set(key, { rule, target });
    const next = step(before, r, group, target, ts, holdMs(rule), clearForS(rule) * 1000);
    if (next) state.instances[key] = next;
    else if (before?.phase === 'firing') resolvedNow.add(key);
  };
  for (const rule of rules) {
    if (!rule.enabled) continue;
    const applies = (role: Role): boolean =>
      (rule.roles.length === 0 || rule.roles.includes(role)) &&
      !(role === 'router' && SERVER_ONLY_KINDS.has(rule.kind));
    const targets = PER_UNIT.has(rule.kind)
      ? units.filter((u) => applies(u.role))
      : input.roles.filter(applies).map((role): AlertTarget => ({ role, scope: '' }));
    for (const t of targets)
      stepOne(`${rule.id}|${unitKey(t)}`, `${rule.id}|${t.role}`, rule, t, readCondition(rule, t, ctx));
  }
  // A lost link is one alert, raised by the stale-metrics rule: the metrics of its units are as stale as that.
  const staleRule = rules.find((r) => r.enabled && r.kind === 'metrics-stale');
  if (staleRule)
    for (const l of links.values()) {
      const on = units.filter((u) => hostsOf(u).includes(l.hostId));
      const down = state.links[l.hostId].downSince;
      const key = `${staleRule.id}|host:${l.hostId}`;
      const target: AlertTarget = {
        role: on[0]?.role ?? 'router',
        scope: `${HOST}${l.hostId}`,
        on: on.flatMap((u) => (u.worker ? [u.worker.id] : [])),
      };
      const r: Reading =
        down === null
          ? { data: true, fire: false, hold: false }
          : {
              data: true,
              fire: true,
              hold: true,
              since: down,
              value: Math.round((ts - down) / 1000),
              text: {
                title: `${l.label} unreachable`,
                detail:
                  `no data from ${namesOn(on) || 'its services'} for ${Math.round((ts - down) / 1000)} s: ${l.detail ?? 'the link is down'}` +
                  `; what is shown of them is as last seen`,
              },
            };
      stepOne(key, key, staleRule, target, r);
    }

  // Mutes: a restart by this console of a unit the instance is about, or a firing alert of its unit that
  // inhibits it. An instance that began firing muted is quiet; once unmuted it is watched afresh.
  const reset = new Set<string>();
  for (const [key, inst] of Object.entries(state.instances)) {
    const { rule, target } = evaluated.get(key) ?? {};
    if (!rule || !target) continue;
    const concerned = concernedOf(rule, target);
    // Another alert of its unit first: one cause, one alert, even while the unit is being restarted.
    let mute: Mute | undefined;
    if (PER_UNIT.has(rule.kind) && !isHost(target))
      for (const source of rules) {
        if (!source.enabled || !INHIBITS[source.kind]?.includes(rule.kind)) continue;
        const by = state.instances[`${source.id}|${unitKey(target)}`];
        if (by?.phase === 'firing') {
          mute = { by: 'alert', text: by.text.title };
          break;
        }
      }
    // A unit's own alerts are a restart's while it is the one restarted; a role's as a whole (its queues,
    // its transfers) while any operation takes its units.
    const own = PER_UNIT.has(rule.kind);
    const restart = concerned.map((u) => restartOf(u, own)).find((r) => r !== undefined);
    const served = target.role === 'router' && !isHost(target) ? emptiedRole() : undefined;
    if (!mute && restart) mute = { by: 'restart', text: restart.what };
    else if (!mute && served)
      mute = { by: 'restart', text: `${served.what}; the router has no other ${served.role} server` };
    const was = prev.instances[key];
    // Quiet and clearing when its restart ends: it stays the restart's until it resolves.
    if (!mute && inst.quiet && inst.clearSince !== null && was?.mute?.by === 'restart') mute = was.mute;
    const justFired = inst.phase === 'firing' && was?.phase !== 'firing';
    let next: Instance = { ...inst, ...(mute ? { mute } : {}) };
    if (!mute) delete next.mute;
    if (justFired) next.quiet = mute !== undefined;
    else if (next.quiet && !mute && next.phase === 'firing' && next.clearSince === null) {
      next = { ...next, phase: 'pending', activeSince: ts, quiet: false, clearSince: null };
      delete next.firedAt;
      reset.add(key);
    }
    state.instances[key] = next;
  }

  // The alerts: each group's firing members.
  const changes: AlertChange[] = [];
  const active: ActiveAlert[] = [];
  const pending: ActiveAlert[] = [];
  const byGroup = new Map<string, string[]>();
  for (const [key, inst] of Object.entries(state.instances)) {
    const list = byGroup.get(inst.group) ?? [];
    list.push(key);
    byGroup.set(inst.group, list);
  }
  const ruleById = new Map(rules.map((r) => [r.id, r]));
  for (const g of Object.keys(prev.groups)) if (!byGroup.has(g)) byGroup.set(g, []);
  for (const [gk, keys] of byGroup) {
    keys.sort();
    const ruleId = gk.slice(0, gk.indexOf('|'));
    const rule = ruleById.get(ruleId);
    const firing = keys.filter((k) => {
      const i = state.instances[k];
      // A quiet instance shows only while a restart makes it expected: held back by another alert, or clearing
      // after its restart, it never needed anyone's attention.
      return i.phase === 'firing' && (!i.quiet || i.mute?.by === 'restart');
    });
    const waiting = keys.filter((k) => state.instances[k].phase === 'pending');
    const before = state.groups[gk];
    if (firing.length === 0) {
      if (before) {
        const left = before.members;
        const why = endReason(left, rule, evaluated, resolvedNow, reset);
        changes.push({
          type: why ? 'ended' : 'resolved',
          alert: before.alert,
          notify: before.notified,
          ...(why ? { reason: why } : {}),
        });
        delete state.groups[gk];
      }
      if (rule && waiting.length > 0) pending.push(alertOf(gk, rule, waiting, state, fleet, val, 'pending'));
      continue;
    }
    if (!rule) continue;
    const alert = alertOf(gk, rule, firing, state, fleet, val, 'firing', before?.firedAt ?? ts);
    const notifiable = firing.some((k) => !state.instances[k].quiet);
    active.push(alert);
    if (!before) changes.push({ type: 'fired', alert, notify: notifiable });
    else if (!before.notified && notifiable) changes.push({ type: 'fired', alert, notify: true });
    else if (before.members.join() !== firing.join()) {
      const gone = before.members.filter((k) => !firing.includes(k));
      changes.push({
        type: 'updated',
        alert,
        notify: false,
        reason:
          gone.length > 0
            ? `no longer about ${gone.map((k) => nameOfKey(k, before)).join(', ')}`
            : 'now also about more',
      });
    }
    state.groups[gk] = {
      ruleId,
      ...(alert.role ? { role: alert.role } : {}),
      ...(alert.host ? { host: alert.host } : {}),
      firedAt: before?.firedAt ?? ts,
      notified: (before?.notified ?? false) || notifiable,
      members: firing,
      alert,
    };
  }
  return { state, changes, active, pending };
}

/** One instance's next state on a reading; undefined when it is (or becomes) inactive. */
function step(
  before: Instance | undefined,
  r: Reading,
  group: string,
  target: AlertTarget,
  ts: number,
  holdMs: number,
  clearMs: number,
): Instance | undefined {
  if (!before || before.phase === 'pending') {
    // Pending needs the condition itself, with data, at every poll: a pause in the data starts it over.
    if (!r.data || !r.fire) return undefined;
    const activeSince = before?.activeSince ?? Math.min(r.since ?? ts, ts);
    const next: Instance = {
      group,
      target,
      phase: 'pending',
      activeSince,
      clearSince: null,
      lastDataAt: ts,
      noData: null,
      ...(r.value !== undefined ? { value: r.value } : {}),
      text: r.text!,
      quiet: false,
      ...(before?.mute ? { mute: before.mute } : {}),
    };
    if (ts - activeSince >= holdMs) {
      next.phase = 'firing';
      next.firedAt = ts;
    }
    return next;
  }
  if (!r.data)
    return {
      ...before,
      target,
      clearSince: null,
      noData: { since: before.noData?.since ?? before.lastDataAt, reason: r.reason },
    };
  if (r.hold)
    return {
      ...before,
      target,
      clearSince: null,
      lastDataAt: ts,
      noData: null,
      ...(r.value !== undefined ? { value: r.value } : {}),
      text: r.text ?? before.text,
    };
  const clearSince = before.clearSince ?? ts;
  if (ts - clearSince >= clearMs) return undefined;
  return { ...before, target, clearSince, lastDataAt: ts, noData: null };
}

/** Why a group's last members left other than by resolving, or null when one of them resolved. */
function endReason(
  left: readonly string[],
  rule: AlertRule | undefined,
  evaluated: ReadonlyMap<string, unknown>,
  resolved: ReadonlySet<string>,
  reset: ReadonlySet<string>,
): string | null {
  if (left.some((k) => resolved.has(k))) return null;
  if (!rule) return `its rule was deleted`;
  if (!rule.enabled) return `its rule ${rule.id} was switched off`;
  if (left.some((x) => reset.has(x)))
    return HOLD_S[rule.kind] !== undefined
      ? `the restart that made it expected is over; it is watched afresh and fires if it still holds for ${rule.forS ?? HOLD_S[rule.kind]} s`
      : `the restart that made it expected is over; its window counts afresh from there`;
  if (left.some((x) => !evaluated.has(x))) return `its rule ${rule.id} no longer watches what it was about`;
  return 'held back by another alert of its unit';
}

function nameOfKey(key: string, g: Group): string {
  const unit = key.slice(key.indexOf('|') + 1);
  const at = unit.indexOf('@');
  return at >= 0 ? unit.slice(at + 1) : (g.role ?? unit);
}

function alertOf(
  gk: string,
  rule: AlertRule,
  keys: readonly string[],
  state: AlertState,
  fleet: readonly FleetWorker[],
  val: (k: string) => number | null,
  phase: 'firing' | 'pending',
  firedAt?: number,
): ActiveAlert {
  const insts = keys.map((k) => state.instances[k]);
  const first = insts[0];
  const host = isHost(first.target) ? first.target.scope.slice(HOST.length) : undefined;
  const role = host === undefined ? first.target.role : undefined;
  const members: Member[] = insts.map((i) => ({
    target: i.target,
    ...(i.value !== undefined ? { value: i.value } : {}),
    text: i.text,
  }));
  const text = host !== undefined ? first.text : groupText(rule, first.target.role, members, fleet, val);
  const workers = insts.flatMap((i) => (i.target.worker ? [i.target.worker.id] : (i.target.on ?? [])));
  const stale = insts.filter((i) => i.noData);
  const muted = insts.filter((i) => i.mute?.by === 'restart');
  let detail = text.detail;
  if (stale.length > 0 && stale.length < insts.length)
    detail += `; no fresh data from ${stale.map((i) => i.target.worker?.id ?? i.target.role).join(', ')}: ${stale[0].noData!.reason}`;
  return {
    key: gk,
    ruleId: rule.id,
    ...(role ? { role } : {}),
    ...(host !== undefined ? { host } : {}),
    severity: rule.severity,
    title: text.title,
    detail,
    since:
      phase === 'firing'
        ? (firedAt ?? Math.min(...insts.map((i) => i.firedAt ?? i.activeSince)))
        : Math.min(...insts.map((i) => i.activeSince)),
    ...(phase === 'pending'
      ? {
          firesAt: Math.min(...insts.map((i) => i.activeSince)) + holdMs(rule),
        }
      : {}),
    ...(workers.length > 0 ? { workers } : {}),
    ...(stale.length === insts.length
      ? {
          noData: {
            since: Math.min(...stale.map((i) => i.noData!.since)),
            reason: stale[0].noData!.reason,
          },
        }
      : {}),
    ...(muted.length === insts.length ? { expected: muted[0].mute!.text } : {}),
  };
}

function sumKnown(xs: Array<number | null>): number | null {
  let t: number | null = null;
  for (const x of xs) if (x !== null) t = (t ?? 0) + x;
  return t;
}
