// An alert is a group: a rule's firing instances of one role (a fleet's workers each have their own, so one
// worker's restarts are never added to another's). Its text names the workers it is about, with their figures,
// and says how the rest of the role stands ("decode KV cache above 90 %: decode-3 on gpu-c (97 %)"). The only
// worker of its role (a 1P1D pair's) has one instance, whose text is its own; so has a role's rule that reads
// the role as a whole (queues, transfer failures), which names the workers from their own values.
import { QUEUE_SIGNALS } from '@shared/signals/spec';
import type { AlertRule } from '@shared/contract';
import type { Role } from '@shared/domain';
import { workerList, workerName, type FleetWorker } from '@shared/worker-names';
import { fmt, pct, span, type AlertTarget, type AlertText } from './conditions';

type Val = (key: string) => number | null;

/** One firing instance of a group: its target, and its last reading with data. */
export interface Member {
  target: AlertTarget;
  value?: number;
  text: AlertText;
}

/** The group's text, from its members (firing instances) and, for context, the role's other workers. */
export function groupText(
  rule: AlertRule,
  role: Role,
  members: readonly Member[],
  fleet: readonly FleetWorker[],
  val: Val,
): AlertText {
  const named = members.filter((m): m is Member & { target: { worker: FleetWorker } } => !!m.target.worker);
  if (named.length === 0) return roleText(rule, role, members[0].text, fleet, val);
  const ws = named.map((m) => m.target.worker);
  const workers = fleet.filter((w) => w.role === role);
  // The only worker of its role has nothing in the role to be told apart from: its own text is the role's.
  if (workers.length === 1 && named.length === 1) return named[0].text;
  // Serving: active and not failing its health check (a multi-node worker whose rank-1 unit stopped is neither).
  const serving = workers.filter(
    (w) => val(`${role}.active@${w.id}`) === 1 && val(`${role}.health_ok@${w.id}`) !== 0,
  ).length;
  const serve = `${serving} of ${workers.length} ${role} workers serve`;
  switch (rule.kind) {
    case 'kv-high': {
      const th = rule.threshold ?? 0.9;
      const full = [...named].sort((a, b) => (b.value ?? 0) - (a.value ?? 0));
      const mine = new Set(ws.map((w) => w.id));
      // A worker's fullest dp rank refuses requests first, as its instance reads it.
      const rest = workers
        .filter((w) => !mine.has(w.id))
        .map((w) => val(`${role}.kv_fullest_rank_ratio@${w.id}`) ?? val(`${role}.kv_ratio@${w.id}`))
        .filter((x): x is number => x !== null)
        .sort((a, b) => b - a);
      const total = val(`${role}.kv_ratio`);
      return {
        title: `${role} KV cache above ${pct(th)}: ${full.map((m) => `${workerName(m.target.worker)} (${pct(m.value ?? 0)})`).join(', ')}`,
        detail:
          `${full.map((m) => `${workerName(m.target.worker)} at ${pct(m.value ?? 0)}`).join(', ')} (threshold ${pct(th)} for ${rule.forS ?? 0} s)` +
          (rest.length > 0 ? `, other ${role} workers at most ${pct(rest[0])}` : '') +
          (total !== null ? `, ${pct(total)} of the role's KV overall` : '') +
          `; new requests there will wait for KV slots or be retracted`,
      };
    }
    case 'service-inactive':
      return {
        title: `${role} service is not active: ${workerList(ws)}`,
        detail: `systemd reports the unit${ws.length > 1 ? 's' : ''} of ${workerList(ws)} as not active; ${serve}; open ${ws.length > 1 ? 'their pages' : 'its page'} for the journal and Result`,
      };
    case 'health-failing':
      return {
        title: `${role} health check failing: ${workerList(ws)}`,
        detail: `${workerList(ws)} ${ws.length === 1 ? 'is' : 'are'} active but ${ws.length === 1 ? 'its' : 'their'} /health check fails (for ${rule.forS ?? 0} s); ${serve}`,
      };
    case 'metrics-stale': {
      if (named.length === 1)
        return { title: `${role} metrics stale: ${workerList(ws)}`, detail: named[0].text.detail };
      const oldest = Math.max(...named.map((m) => m.value ?? 0));
      return {
        title: `${role} metrics stale: ${workerList(ws)}`,
        detail: `no successful /metrics scrape of ${workerList(ws)} for up to ${oldest} s; charts stop here`,
      };
    }
    case 'restart-loop': {
      const loops = [...named].sort((a, b) => (b.value ?? 0) - (a.value ?? 0));
      return {
        title: `${role} is restarting in a loop: ${workerList(ws)}`,
        detail: `systemd restarted ${loops.map((m) => `${workerName(m.target.worker)} ${m.value ?? 0} times`).join(', ')} in the last ${span(rule.windowS ?? 600)} (NRestarts rising, counted per worker)`,
      };
    }
    default:
      return named[0].text;
  }
}

/** A rule that reads a fleet role as a whole names the workers from their own figures; a pair's text is its own. */
function roleText(
  rule: AlertRule,
  role: Role,
  text: AlertText,
  fleet: readonly FleetWorker[],
  val: Val,
): AlertText {
  const workers = fleet.filter((w) => w.role === role);
  if (workers.length === 0 || role === 'router') return text;
  switch (rule.kind) {
    case 'transfer-failures': {
      const failing = workers
        .map((w) => ({
          w,
          x:
            (val(`${role}.transfer_failed_per_min@${w.id}`) ?? 0) +
            (val(`${role}.bootstrap_failed_per_min@${w.id}`) ?? 0),
        }))
        .filter((e) => e.x > 0)
        .sort((a, b) => b.x - a.x);
      if (failing.length === 0) return text;
      return {
        title: `${text.title}: ${failing.map((e) => `${workerName(e.w)} (${fmt(e.x)}/min)`).join(', ')}`,
        detail: text.detail,
      };
    }
    case 'queue-growing': {
      const queues: readonly string[] = QUEUE_SIGNALS[role];
      const held = workers
        .map((w) => ({ w, x: queues.reduce((t, q) => t + (val(`${role}.${q}@${w.id}`) ?? 0), 0) }))
        .filter((e) => e.x > 0)
        .sort((a, b) => b.x - a.x);
      if (held.length === 0) return text;
      const total = held.reduce((t, e) => t + e.x, 0);
      return {
        title: `${text.title}: ${workerName(held[0].w)} holds ${fmt(held[0].x)} of ${fmt(total)}`,
        detail: `${text.detail}; now ${held.map((e) => `${workerName(e.w)} ${fmt(e.x)}`).join(', ')}`,
      };
    }
    default:
      return text;
  }
}
