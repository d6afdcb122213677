// Where are requests piling up? A pure reading of the latest signals of a PD pipeline
// (router → prefill → KV transfer → decode) into one plain verdict with the figures that support it.
//
// The PD queues say which hand-off is stuck (reference §1.6):
//   prefill queued            waiting for prefill compute                          → prefill-bound
//   prefill bootstrap queue   waiting for decode to accept (handshake, KV slots)   → decode-bound
//   decode prealloc queue     waiting for free KV slots on decode                  → decode-bound
//   prefill inflight queue    KV being sent                                        → transfer-bound
//   decode transfer queue     waiting for KV to arrive                             → transfer-bound
// plus decode KV near full (decode-bound), transfer failures and latency (transfer-bound), and router 5xx or
// unhealthy workers while the servers have room (router-bound).
//
// In a fleet a role is several workers: the unscoped keys are the role's aggregate, and the per-worker keys
// (`decode.kv_ratio@decode-2`) say which worker is the one at fault, so the verdict names it and its host.
import type { RouterWorkerState, Verdict } from '@shared/contract';
import type { Role } from '@shared/domain';
import { splitScopedKey } from '@shared/signals/scoped-key';
import { workerList, workerName as named, type FleetWorker } from './worker-names';

export interface VerdictThresholds {
  /** A queue this long counts as piling up (requests). */
  queue: number;
  /** Decode KV usage at or above this is "full" (0..1). */
  kvFull: number;
  /** KV transfer latency (p50 or mean) above this is slow (ms). */
  transferLatencyMs: number;
  /** Router 5xx share at or above this is failing (0..1). */
  routerErrorShare: number;
}

export const DEFAULT_VERDICT_THRESHOLDS: VerdictThresholds = {
  queue: 8,
  kvFull: 0.9,
  transferLatencyMs: 500,
  routerErrorShare: 0.05,
};

export interface VerdictInput {
  /** Latest values by signal key (`prefill.queued`, `decode.kv_ratio`, …); absent or null = unknown. */
  values: Record<string, number | null | undefined>;
  /** Change of queue keys over the last couple of minutes (same keys), when known. */
  growth?: Record<string, number | null | undefined>;
  /** Roles this deployment has. */
  roles: readonly Role[];
  /**
   * A fleet's workers, for naming them with their host. Without it the workers are read from the scoped keys
   * in `values` (named without a host); a one-host pair has no scoped keys and none.
   */
  workers?: readonly FleetWorker[];
  /** The router's own view of its workers (its per-worker health gauges), to name the ones it finds unhealthy. */
  routerWorkers?: readonly RouterWorkerState[];
}

/** A fleet's workers of each role: as given, else every scope the values name for the role. */
function workersByRole(input: VerdictInput): Map<Role, FleetWorker[]> {
  const by = new Map<Role, FleetWorker[]>();
  const add = (w: FleetWorker): void => {
    const list = by.get(w.role) ?? [];
    if (!list.some((x) => x.id === w.id)) list.push(w);
    by.set(w.role, list);
  };
  if (input.workers) for (const w of input.workers) add(w);
  else
    for (const k of Object.keys(input.values)) {
      const { key, scope } = splitScopedKey(k);
      const role = key.slice(0, key.indexOf('.')) as Role;
      if (scope !== undefined && input.roles.includes(role) && !key.startsWith('gpu.'))
        add({ id: scope, role });
    }
  return by;
}

type Stage = 'prefill' | 'decode' | 'transfer' | 'router';

export function pipelineVerdict(
  input: VerdictInput,
  th: VerdictThresholds = DEFAULT_VERDICT_THRESHOLDS,
): Verdict {
  const v = (k: string): number | null => {
    const x = input.values[k];
    return x === undefined || x === null || !Number.isFinite(x) ? null : x;
  };
  const g = (k: string): number => {
    const x = input.growth?.[k];
    return x === undefined || x === null || !Number.isFinite(x) ? 0 : x;
  };

  // A fleet's services list a role once per worker; the role-level checks below read each role once.
  const roles = [...new Set(input.roles)];
  const fleet = workersByRole(input);
  const reason = (role: Role, key: string): string | null =>
    v(`${role}.active${key}`) === 0
      ? 'not active (systemd)'
      : v(`${role}.health_ok${key}`) === 0
        ? `running but failing its ${role === 'router' ? 'readiness' : 'health'} check`
        : null;

  // 1. A service that is not running explains everything downstream of it. In a fleet a role stops only when
  // all its workers do; one worker down leaves the others serving, which the verdict says beside its reading.
  // Each worker is named once: the role's down workers in one line, then one line per reason.
  const down: string[] = [];
  const degraded: string[] = [];
  // Servers down or failing their own health check: the router counting them unhealthy is their doing, not its.
  const outServers: FleetWorker[] = [];
  for (const role of roles) {
    const workers = fleet.get(role);
    if (workers && workers.length > 0) {
      const out = workers
        .map((w) => ({ w, why: reason(role, `@${w.id}`) }))
        .filter((x): x is { w: FleetWorker; why: string } => x.why !== null);
      if (out.length === 0) continue;
      if (role !== 'router') outServers.push(...out.map((x) => x.w));
      if (out.length === workers.length && out.length > 1) {
        down.push(`every ${role} worker is down: ${workerList(workers)}`);
        const whys = [...new Set(out.map((x) => x.why))];
        for (const why of whys)
          down.push(`${workerList(out.filter((x) => x.why === why).map((x) => x.w))}: ${why}`);
      } else {
        const texts = out.map((x) => `${named(x.w)} is ${x.why}`).join(', ');
        if (out.length === workers.length) down.push(texts);
        else
          degraded.push(
            `${texts}; ${workers.length - out.length} of ${workers.length} ${role} workers serve`,
          );
      }
      continue;
    }
    const why = reason(role, '');
    if (why !== null) down.push(`${role} is ${why}`);
  }
  if (down.length > 0)
    return {
      kind: 'service-down',
      headline: `Requests cannot flow: ${down[0]}.`,
      evidence: down,
    };

  const servers = roles.filter((r) => r !== 'router');
  if (servers.length > 0 && servers.every((r) => v(`${r}.metrics_ok`) !== 1))
    return {
      kind: 'unknown',
      headline: 'No metrics from the servers yet, so where requests wait cannot be told.',
      evidence: servers.map((r) =>
        v(`${r}.metrics_ok`) === 0 ? `${r}: /metrics did not answer` : `${r}: not scraped yet`,
      ),
    };

  // A count the role's aggregate lacks is the sum of its workers' own (a fleet's queues add up).
  const summed = (k: string): number | null => {
    const own = v(k);
    if (own !== null) return own;
    const xs = (fleet.get(k.slice(0, k.indexOf('.')) as Role) ?? [])
      .map((w) => v(`${k}@${w.id}`))
      .filter((x): x is number => x !== null);
    return xs.length === 0 ? null : xs.reduce((t, x) => t + x, 0);
  };
  const q = (k: string): number => summed(k) ?? 0;
  const norm = (k: string): number => q(k) / th.queue + (g(k) >= th.queue / 2 ? 0.5 : 0);
  const ev: Record<Stage, Array<[number, string]>> = { prefill: [], decode: [], transfer: [], router: [] };
  const add = (stage: Stage, weight: number, text: string): void => {
    if (weight > 0) ev[stage].push([weight, text]);
  };
  const reqs = (k: string): string => `${fmt(q(k))} request${q(k) === 1 ? '' : 's'}`;
  const grow = (k: string): string => (g(k) > 0 ? ` (+${fmt(g(k))} in 2 min)` : '');
  // In a fleet, which worker holds the queue: ", 9 on prefill-1 on gpu-a, others at most 2".
  const where = (k: string): string => {
    const held = (fleet.get(k.slice(0, k.indexOf('.')) as Role) ?? [])
      .map((w) => ({ w, n: v(`${k}@${w.id}`) }))
      .filter((x): x is { w: FleetWorker; n: number } => x.n !== null)
      .sort((a, b) => b.n - a.n);
    if (held.length === 0 || !(held[0].n > 0)) return '';
    const others = held.length > 1 ? held[1].n : 0;
    return others > 0
      ? `, ${fmt(held[0].n)} on ${named(held[0].w)}, others at most ${fmt(others)}`
      : `, all on ${named(held[0].w)}`;
  };

  add(
    'prefill',
    norm('prefill.queued'),
    `${reqs('prefill.queued')} queued for prefill${grow('prefill.queued')}${where('prefill.queued')}`,
  );
  add(
    'decode',
    norm('decode.decode_prealloc_queue'),
    `${reqs('decode.decode_prealloc_queue')} waiting for KV slots on decode${grow('decode.decode_prealloc_queue')}${where('decode.decode_prealloc_queue')}`,
  );
  add(
    'decode',
    norm('prefill.prefill_bootstrap_queue'),
    `${reqs('prefill.prefill_bootstrap_queue')} in the prefill bootstrap queue, waiting for decode to accept${where('prefill.prefill_bootstrap_queue')}`,
  );
  add(
    'decode',
    norm('decode.queued'),
    `${reqs('decode.queued')} queued on decode${grow('decode.queued')}${where('decode.queued')}`,
  );
  // The fullest dp rank is the one refusing requests (the same figure the KV alert watches).
  const kvTotal = v('decode.kv_ratio');
  const kvOf = (scope: string): number | null =>
    v(`decode.kv_fullest_rank_ratio${scope}`) ?? v(`decode.kv_ratio${scope}`);
  const decodeWorkers = (fleet.get('decode') ?? [])
    .map((w) => ({ w, kv: kvOf(`@${w.id}`) }))
    .filter((x): x is { w: FleetWorker; kv: number } => x.kv !== null)
    .sort((a, b) => b.kv - a.kv);
  // In a fleet the pool that refuses requests is the fullest worker's, however much room the others have.
  const kv = decodeWorkers.length > 0 ? decodeWorkers[0].kv : kvOf('');
  if (decodeWorkers.length > 0 && kv !== null && kv >= th.kvFull)
    add('decode', 1 + (kv - th.kvFull) * 10, fullestWorkerText(decodeWorkers, th.kvFull));
  else if (kv !== null && kv >= th.kvFull)
    add(
      'decode',
      1 + (kv - th.kvFull) * 10,
      kvTotal !== null && kv > kvTotal
        ? `decode KV cache ${pct(kv)} full on its fullest dp rank (${pct(kvTotal)} overall)`
        : `decode KV cache ${pct(kv)} full`,
    );
  add(
    'transfer',
    norm('prefill.prefill_inflight_queue'),
    `${reqs('prefill.prefill_inflight_queue')} in flight (KV being sent) on prefill${where('prefill.prefill_inflight_queue')}`,
  );
  add(
    'transfer',
    norm('decode.decode_transfer_queue'),
    `${reqs('decode.decode_transfer_queue')} waiting for KV to arrive on decode${where('decode.decode_transfer_queue')}`,
  );
  const failures = (v('prefill.transfer_failed_per_min') ?? 0) + (v('decode.transfer_failed_per_min') ?? 0);
  if (failures > 0) add('transfer', 1, `${fmt(failures)} KV transfer failures per minute`);
  const latency =
    v('decode.kv_transfer_latency_p50_ms') ??
    v('prefill.kv_transfer_latency_p50_ms') ??
    v('decode.kv_transfer_latency_ms') ??
    v('prefill.kv_transfer_latency_ms');
  if (latency !== null && latency > th.transferLatencyMs)
    add('transfer', 0.5 + latency / th.transferLatencyMs / 4, `KV transfer latency ${fmt(latency)} ms`);
  const errShare = v('router.router_error_share');
  if (errShare !== null && errShare >= th.routerErrorShare)
    add('router', 1 + errShare * 10, `${pct(errShare)} of router responses are 5xx`);
  const healthy = v('router.workers_healthy');
  const total = v('router.workers_total');
  if (healthy !== null && total !== null && total > 0 && healthy < total) {
    const sick = unhealthyAtRouter(input.routerWorkers, input.workers, outServers);
    // Only workers the router calls unhealthy while they themselves look fine point at the router (or the path
    // to them); a stopped worker is already the degraded line. Without the router's list, by count.
    const unexplained = sick ? sick.unexplained : total - healthy - outServers.length;
    if (unexplained > 0)
      add('router', 1, `${fmt(healthy)} of ${fmt(total)} workers healthy at the router${sick?.text ?? ''}`);
  }

  const score = (s: Stage): number => ev[s].reduce((t, [w]) => t + w, 0);
  const stages: Stage[] = ['decode', 'transfer', 'prefill', 'router'];
  // Ties go to the stage furthest downstream: a stuck decode backs up everything before it.
  const best = stages.reduce((a, b) => (score(b) > score(a) ? b : a));
  const top = score(best);

  if (top < 1 && degraded.length > 0)
    return {
      kind: 'service-down',
      headline: `Degraded: ${degraded[0]}.`,
      evidence: degraded,
    };

  if (top < 1) {
    const running = q('prefill.running') + q('decode.running');
    const rps = v('router.router_requests_per_s');
    const evidence = [
      `prefill: ${reqs('prefill.queued')} queued, ${reqs('prefill.prefill_inflight_queue')} in flight`,
      `decode: ${reqs('decode.decode_prealloc_queue')} waiting for KV slots, ${reqs('decode.decode_transfer_queue')} waiting for KV` +
        kvBullet(decodeWorkers, kvTotal, kv),
    ];
    if (running === 0 && (rps === null || rps === 0))
      return { kind: 'idle', headline: 'Idle: no requests are running or waiting.', evidence };
    return {
      kind: 'healthy',
      headline: 'Healthy: no queue is building up anywhere in the pipeline.',
      evidence,
    };
  }

  const evidence = ev[best].sort((a, b) => b[0] - a[0]).map(([, t]) => t);
  for (const s of stages) if (s !== best && score(s) >= 1) evidence.push(`also: ${ev[s][0][1]}`);
  for (const d of degraded) evidence.push(`also: ${d}`);
  const headline: Record<Stage, string> = {
    prefill: `Prefill-bound: requests are piling up before prefill — ${evidence[0]}.`,
    decode: `Decode-bound: requests are piling up at decode — ${evidence[0]}.`,
    transfer: `Transfer-bound: requests are stuck in the KV transfer from prefill to decode — ${evidence[0]}.`,
    router: `Router-bound: the router is failing requests while the servers have room — ${evidence[0]}.`,
  };
  return { kind: `${best}-bound`, headline: headline[best], evidence };
}

/**
 * Which workers the router counts unhealthy, by the name the rest of the console gives them ("decode-1 on gpu-b")
 * and by URL where no worker of this deployment has it, so "2 of 3 healthy" says which one to look at.
 */
function unhealthyAtRouter(
  listed: readonly RouterWorkerState[] | undefined,
  workers: readonly FleetWorker[] | undefined,
  outServers: readonly FleetWorker[],
): { text: string; unexplained: number } | null {
  if (!listed) return null;
  const sick = listed.filter((w) => w.healthy === false && !w.removed);
  const known: FleetWorker[] = [];
  const unknown: string[] = [];
  let open = 0;
  for (const r of sick) {
    const w = workers?.find((x) => x.url === r.url);
    if (w && outServers.includes(w)) continue;
    if (r.cbState === 'open') open++;
    if (w) known.push(w);
    else unknown.push(r.role ? `${r.role} worker ${r.url}` : r.url);
  }
  const count = known.length + unknown.length;
  if (count === 0) return { text: '', unexplained: 0 };
  const names = [...(known.length ? [workerList(known)] : []), ...unknown];
  const breaker =
    open === 0 ? '' : open === count ? ' (circuit breaker open)' : ` (${open} with circuit breaker open)`;
  return { text: `; not healthy: ${names.join(', ')}${breaker}`, unexplained: count };
}

/**
 * The KV part of the healthy bullet. In a fleet the card beside it shows the role's aggregate, so the bullet says
 * that figure and names the fullest worker separately ("KV 37 % overall, fullest decode-2 on gpu-b at 80 %")
 * instead of one bare figure that is neither the card's nor obviously one worker's.
 */
function kvBullet(
  sorted: readonly { w: FleetWorker; kv: number }[],
  total: number | null,
  kv: number | null,
): string {
  if (sorted.length === 0) return kv !== null ? `, KV ${pct(kv)}` : '';
  const top = sorted[0];
  if (sorted.length === 1) return `, KV ${pct(top.kv)} on ${named(top.w)}`;
  const fullest = `fullest ${named(top.w)} at ${pct(top.kv)}`;
  return total !== null ? `, KV ${pct(total)} overall, ${fullest}` : `, KV: ${fullest}`;
}

/** "decode-2 on gpu-b at 97 % KV, others below 60 %": the fullest worker first, then how the rest stand. */
function fullestWorkerText(sorted: readonly { w: FleetWorker; kv: number }[], kvFull: number): string {
  const [top, ...rest] = sorted;
  const head = `${named(top.w)} at ${pct(top.kv)} KV`;
  if (rest.length === 0) return head;
  const full = rest.filter((x) => x.kv >= kvFull);
  const below = rest.filter((x) => x.kv < kvFull);
  const parts = [head, ...full.map((x) => `${named(x.w)} at ${pct(x.kv)}`)];
  if (below.length > 0) {
    // Rounded up to the next 10 %, as an operator would say it.
    const bound = Math.min(100, Math.max(10, Math.ceil((below[0].kv * 100 + 1e-9) / 10) * 10));
    parts.push(
      `${full.length > 0 ? `${below.length} other${below.length === 1 ? '' : 's'}` : 'others'} below ${bound} %`,
    );
  }
  return parts.join(', ');
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n >= 10 ? n.toFixed(0) : n.toFixed(1);
}

function pct(r: number): string {
  return `${(r * 100).toFixed(r >= 0.995 && r < 1 ? 1 : 0)} %`;
}
