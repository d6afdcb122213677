// A fleet alert names the workers it is about. The rules watch a role's aggregate (its fullest worker's KV, up
// only while every worker is, queues and failures summed), so an alert on "decode" alone leaves a fleet operator
// to find which of eight workers it means: here the firing condition's text is rewritten from the workers' own
// values ("decode KV cache above 90 %: decode-3 on gpu-c (97 %)"). A one-host pair has no workers and keeps the
// rule's own text.
import { QUEUE_SIGNALS } from '@shared/signals/spec';
import type { AlertRule } from '@shared/contract';
import type { Role } from '@shared/domain';
import { workerList, workerName, type FleetWorker } from '../signals/worker-names';

export interface AlertText {
  title: string;
  detail: string;
}

type Val = (key: string) => number | null;

/** The role's workers that run (active) but fail their health check: what the health rule fires on in a fleet. */
export function failingHealth(workers: readonly FleetWorker[], role: Role, val: Val): FleetWorker[] {
  return workers.filter(
    (w) => w.role === role && val(`${role}.active@${w.id}`) === 1 && val(`${role}.health_ok@${w.id}`) === 0,
  );
}

/** The role-level text of a true condition, with the fleet's workers it is about named; unchanged without any. */
export function namingWorkers(
  rule: AlertRule,
  role: Role,
  text: AlertText,
  fleet: readonly FleetWorker[],
  val: Val,
): AlertText {
  const workers = fleet.filter((w) => w.role === role);
  if (workers.length === 0 || role === 'router') return text;
  const of = (key: string): { w: FleetWorker; x: number }[] =>
    workers
      .map((w) => ({ w, x: val(`${role}.${key}@${w.id}`) }))
      .filter((e): e is { w: FleetWorker; x: number } => e.x !== null);
  // Serving: active and not failing its health check (a multi-node worker whose rank-1 unit stopped is neither).
  const serving = workers.filter(
    (w) => val(`${role}.active@${w.id}`) === 1 && val(`${role}.health_ok@${w.id}`) !== 0,
  ).length;
  const serve = `${serving} of ${workers.length} ${role} workers serve`;
  switch (rule.kind) {
    case 'kv-high': {
      const th = rule.threshold ?? 0.9;
      // A worker's fullest dp rank refuses requests first, as the role rule reads the fleet's fullest.
      const kv = workers
        .map((w) => ({
          w,
          x: val(`${role}.kv_fullest_rank_ratio@${w.id}`) ?? val(`${role}.kv_ratio@${w.id}`),
        }))
        .filter((e): e is { w: FleetWorker; x: number } => e.x !== null)
        .sort((a, b) => b.x - a.x);
      const full = kv.filter((e) => e.x > th);
      if (full.length === 0) return text;
      const rest = kv.filter((e) => e.x <= th);
      const total = val(`${role}.kv_ratio`);
      return {
        title: `${role} KV cache above ${pct(th)}: ${full.map((e) => `${workerName(e.w)} (${pct(e.x)})`).join(', ')}`,
        detail:
          `${full.map((e) => `${workerName(e.w)} at ${pct(e.x)}`).join(', ')} (threshold ${pct(th)} for ${rule.forS ?? 0} s)` +
          (rest.length > 0 ? `, other ${role} workers at most ${pct(rest[0].x)}` : '') +
          (total !== null ? `, ${pct(total)} of the role's KV overall` : '') +
          `; new requests there will wait for KV slots or be retracted`,
      };
    }
    case 'service-inactive': {
      const down = of('active').filter((e) => e.x === 0);
      if (down.length === 0) return text;
      return {
        title: `${role} service is not active: ${workerList(down.map((e) => e.w))}`,
        detail: `systemd reports the unit${down.length > 1 ? 's' : ''} of ${workerList(down.map((e) => e.w))} as not active; ${serve}; open ${down.length > 1 ? 'their pages' : 'its page'} for the journal and Result`,
      };
    }
    case 'health-failing': {
      const failing = failingHealth(workers, role, val);
      if (failing.length === 0) return text;
      return {
        title: `${role} health check failing: ${workerList(failing)}`,
        detail: `${workerList(failing)} ${failing.length === 1 ? 'is' : 'are'} active but ${failing.length === 1 ? 'its' : 'their'} /health check fails (for ${rule.forS ?? 0} s); ${serve}`,
      };
    }
    case 'metrics-stale': {
      const stale = of('metrics_ok').filter((e) => e.x !== 1);
      if (stale.length === 0) return text;
      const names = workerList(stale.map((e) => e.w));
      return { title: `${role} metrics stale: ${names}`, detail: `${names}: ${text.detail}` };
    }
    case 'restart-loop': {
      // NRestarts counts since the unit was loaded, not in the window: the worker with the most is the likely
      // one, said as a count rather than claimed.
      const counts = of('restarts')
        .filter((e) => e.x > 0)
        .sort((a, b) => b.x - a.x);
      if (counts.length === 0) return text;
      return {
        title: counts.length === 1 ? `${text.title}: ${workerName(counts[0].w)}` : text.title,
        detail: `${text.detail}; NRestarts now: ${counts.map((e) => `${workerName(e.w)} ${e.x}`).join(', ')}`,
      };
    }
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
  }
}

function pct(r: number): string {
  return `${Math.round(r * 1000) / 10} %`;
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
