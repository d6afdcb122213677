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
import type { Verdict } from '@shared/contract';
import type { Role } from '@shared/domain';

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

  // 1. A service that is not running explains everything downstream of it.
  const down: string[] = [];
  for (const role of input.roles) {
    if (v(`${role}.active`) === 0) down.push(`${role} is not active (systemd)`);
    else if (v(`${role}.health_ok`) === 0)
      down.push(`${role} is running but failing its ${role === 'router' ? 'readiness' : 'health'} check`);
  }
  if (down.length > 0)
    return {
      kind: 'service-down',
      headline: `Requests cannot flow: ${down[0]}.`,
      evidence: down,
    };

  const servers = input.roles.filter((r) => r !== 'router');
  if (servers.length > 0 && servers.every((r) => v(`${r}.metrics_ok`) !== 1))
    return {
      kind: 'unknown',
      headline: 'No metrics from the servers yet, so where requests wait cannot be told.',
      evidence: servers.map((r) =>
        v(`${r}.metrics_ok`) === 0 ? `${r}: /metrics did not answer` : `${r}: not scraped yet`,
      ),
    };

  const q = (k: string): number => v(k) ?? 0;
  const norm = (k: string): number => q(k) / th.queue + (g(k) >= th.queue / 2 ? 0.5 : 0);
  const ev: Record<Stage, Array<[number, string]>> = { prefill: [], decode: [], transfer: [], router: [] };
  const add = (stage: Stage, weight: number, text: string): void => {
    if (weight > 0) ev[stage].push([weight, text]);
  };
  const reqs = (k: string): string => `${fmt(q(k))} request${q(k) === 1 ? '' : 's'}`;
  const grow = (k: string): string => (g(k) > 0 ? ` (+${fmt(g(k))} in 2 min)` : '');

  add(
    'prefill',
    norm('prefill.queued'),
    `${reqs('prefill.queued')} queued for prefill${grow('prefill.queued')}`,
  );
  add(
    'decode',
    norm('decode.decode_prealloc_queue'),
    `${reqs('decode.decode_prealloc_queue')} waiting for KV slots on decode${grow('decode.decode_prealloc_queue')}`,
  );
  add(
    'decode',
    norm('prefill.prefill_bootstrap_queue'),
    `${reqs('prefill.prefill_bootstrap_queue')} in the prefill bootstrap queue, waiting for decode to accept`,
  );
  add('decode', norm('decode.queued'), `${reqs('decode.queued')} queued on decode${grow('decode.queued')}`);
  // The fullest dp rank is the one refusing requests (the same figure the KV alert watches).
  const kvTotal = v('decode.kv_ratio');
  const kv = v('decode.kv_fullest_rank_ratio') ?? kvTotal;
  if (kv !== null && kv >= th.kvFull)
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
    `${reqs('prefill.prefill_inflight_queue')} in flight (KV being sent) on prefill`,
  );
  add(
    'transfer',
    norm('decode.decode_transfer_queue'),
    `${reqs('decode.decode_transfer_queue')} waiting for KV to arrive on decode`,
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
  if (healthy !== null && total !== null && total > 0 && healthy < total)
    add('router', 1, `${fmt(healthy)} of ${fmt(total)} workers healthy at the router`);

  const score = (s: Stage): number => ev[s].reduce((t, [w]) => t + w, 0);
  const stages: Stage[] = ['decode', 'transfer', 'prefill', 'router'];
  // Ties go to the stage furthest downstream: a stuck decode backs up everything before it.
  const best = stages.reduce((a, b) => (score(b) > score(a) ? b : a));
  const top = score(best);

  if (top < 1) {
    const running = q('prefill.running') + q('decode.running');
    const rps = v('router.router_requests_per_s');
    const evidence = [
      `prefill: ${reqs('prefill.queued')} queued, ${reqs('prefill.prefill_inflight_queue')} in flight`,
      `decode: ${reqs('decode.decode_prealloc_queue')} waiting for KV slots, ${reqs('decode.decode_transfer_queue')} waiting for KV` +
        (kv !== null ? `, KV ${pct(kv)}` : ''),
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
  const headline: Record<Stage, string> = {
    prefill: `Prefill-bound: requests are piling up before prefill — ${evidence[0]}.`,
    decode: `Decode-bound: requests are piling up at decode — ${evidence[0]}.`,
    transfer: `Transfer-bound: requests are stuck in the KV transfer from prefill to decode — ${evidence[0]}.`,
    router: `Router-bound: the router is failing requests while the servers have room — ${evidence[0]}.`,
  };
  return { kind: `${best}-bound`, headline: headline[best], evidence };
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n >= 10 ? n.toFixed(0) : n.toFixed(1);
}

function pct(r: number): string {
  return `${(r * 100).toFixed(r >= 0.995 && r < 1 ? 1 : 0)} %`;
}
