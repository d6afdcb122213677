// A day of plausible PD history written straight into a SignalsStore, for the dashboard benchmark only
// (a live demo needs 24 h to fill the store; the benchmark needs it at once). Values follow a daily load
// curve with noise, KV spikes and a short outage, so decimation has peaks and gaps to preserve.
import type { Role } from '../../src/shared/domain';
import type { SignalsStore } from '../../src/main/core/signals/signals-store';

export interface SyntheticHistoryOptions {
  fromMs: number;
  toMs: number;
  stepMs?: number;
  roles: readonly Role[];
  gpus: readonly number[];
}

export function fillSyntheticHistory(
  store: Pick<SignalsStore, 'writeRow'>,
  deploymentId: string,
  o: SyntheticHistoryOptions,
): number {
  const step = o.stepMs ?? 1000;
  let rows = 0;
  let seed = 12345;
  const rnd = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const outageFrom = o.fromMs + (o.toMs - o.fromMs) * 0.62;
  const outageTo = outageFrom + 90_000;
  for (let t = o.fromMs; t < o.toMs; t += step) {
    const day = ((t - o.fromMs) / 86_400_000) * Math.PI * 2;
    const load = 0.55 + 0.35 * Math.sin(day - 1.2) + 0.05 * (rnd() - 0.5);
    const spike = rnd() < 0.0008 ? 0.25 : 0;
    const down = t >= outageFrom && t < outageTo;
    for (const role of o.roles) {
      const v: Record<string, number | null> = {};
      v[`${role}.active`] = 1;
      v[`${role}.health_ok`] = down && role === 'decode' ? 0 : 1;
      v[`${role}.metrics_ok`] = down && role === 'decode' ? 0 : 1;
      v[`${role}.restarts`] = t >= outageTo && role === 'decode' ? 1 : 0;
      if (role === 'router') {
        v['router.router_requests_per_s'] = 8 * load + rnd();
        v['router.router_error_share'] = down ? 0.4 : 0.002 * rnd();
        v['router.router_errors_per_s'] = (down ? 0.4 : 0.002 * rnd()) * 8 * load;
        v['router.workers_healthy'] = down ? 1 : 2;
        v['router.workers_total'] = 2;
      } else if (down && role === 'decode') {
        for (const k of ['kv_ratio', 'kv_used', 'kv_free', 'kv_evictable', 'queued', 'running'])
          v[`${role}.${k}`] = null;
      } else {
        const cap = role === 'decode' ? 2_580_000 : 447_416;
        const ratio = Math.min(1, Math.max(0, load * (role === 'decode' ? 0.9 : 0.4) + spike + 0.03 * rnd()));
        v[`${role}.kv_ratio`] = ratio;
        v[`${role}.kv_used`] = ratio * cap;
        v[`${role}.kv_evictable`] = cap * 0.1 * rnd();
        v[`${role}.kv_free`] = cap * (1 - ratio) * 0.9;
        v[`${role}.kv_capacity`] = cap;
        v[`${role}.running`] = Math.round(40 * load);
        v[`${role}.queued`] = Math.round(Math.max(0, 10 * (load - 0.7)) * rnd() * 3);
        v[`${role}.ttft_p50_s`] = 0.3 + load * 0.4;
        v[`${role}.ttft_p90_s`] = 0.6 + load * 0.9;
        v[`${role}.ttft_p99_s`] = 1.2 + load * 2 + spike * 8;
        v[`${role}.itl_p50_s`] = 0.018 + load * 0.01;
        v[`${role}.itl_p90_s`] = 0.025 + load * 0.015;
        v[`${role}.itl_p99_s`] = 0.04 + load * 0.03;
        v[`${role}.e2e_p50_s`] = 8 + load * 10;
        v[`${role}.e2e_p90_s`] = 15 + load * 18;
        v[`${role}.e2e_p99_s`] = 25 + load * 30;
        v[`${role}.prompt_tokens_per_s`] = 160_000 * load;
        v[`${role}.generation_tokens_per_s`] = 6_500 * load;
        v[`${role}.cache_hit_rate`] = 0.4 + 0.2 * rnd();
        v[`${role}.kv_transfer_gb_s`] = 18 + 6 * rnd();
        v[`${role}.kv_transfer_latency_p50_ms`] = 40 + 30 * load;
        v[`${role}.kv_transfer_latency_p99_ms`] = 90 + 80 * load + spike * 400;
        v[`${role}.transfer_failed_per_min`] = spike ? 2 : 0;
        // The rest of the KV and Metrics pages' keys, so every chart of both has a day to draw.
        v[`${role}.cache_hit_rate_window`] = 0.45 + 0.1 * load + 0.02 * rnd();
        v[`${role}.retracted_per_min`] = spike ? 6 * rnd() : 0;
        v[`${role}.retracted`] = spike ? Math.round(4 * rnd()) : 0;
        const queue = (k: number): number => Math.round(Math.max(0, 8 * (load - 0.6)) * rnd() * k);
        if (role === 'prefill') {
          v['prefill.prefill_bootstrap_queue'] = queue(2);
          v['prefill.prefill_inflight_queue'] = queue(3);
        } else {
          v['decode.decode_prealloc_queue'] = queue(2);
          v['decode.decode_transfer_queue'] = queue(1);
        }
      }
      store.writeRow(deploymentId, role, t, v);
    }
    const g: Record<string, number | null> = {};
    for (const i of o.gpus) {
      const prefill = i < 4;
      g[`gpu.${i}.util`] = Math.min(100, (prefill ? 70 : 85) * load + 10 * rnd());
      g[`gpu.${i}.mem_used`] = (prefill ? 62 : 74) * 1024 ** 3 + rnd() * 1024 ** 3;
      g[`gpu.${i}.mem_total`] = 80 * 1024 ** 3;
      g[`gpu.${i}.temp`] = 45 + 25 * load + 2 * rnd();
      g[`gpu.${i}.power`] = 150 + 450 * load + 20 * rnd();
    }
    if (o.gpus.length > 0) store.writeRow(deploymentId, 'gpu', t, g);
    rows++;
  }
  return rows;
}
