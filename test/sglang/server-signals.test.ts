import { describe, expect, it } from 'vitest';
import { SERVER_SIGNAL_KEYS, serverSignals } from '../../src/main/core/probes/sglang/server-signals';
import { fixture, prom } from './prom';

const keysOf = (xs: { key: string }[]) => xs.map((x) => x.key).sort();

describe('serverSignals', () => {
  it('newest prefill (§7.1): queues under the new bootstrap name, KV transfer as histogram', () => {
    const s = serverSignals(fixture('prefill-newest.prom'), { role: 'prefill' });
    expect(s.values.running).toBe(3);
    expect(s.values.queued).toBe(2);
    expect(s.values.prefill_bootstrap_queue).toBe(1);
    expect(s.values.prefill_inflight_queue).toBe(4);
    expect(s.values.cache_hit_rate).toBe(0.63);
    expect(s.values.retracted).toBe(0); // pid-labelled series still read
    expect(s.values.bootstrap_failed_total).toBe(0);
    expect(s.kvTransferForm).toBe('histogram');
    // histogram era: mean since start = _sum / _count = 41977.3 / 1533 = 27.3825...
    expect(s.values.kv_transfer_latency_ms).toBeCloseTo(41977.3 / 1533, 10);
    expect(s.values.decode_prealloc_queue).toBeNull();
    // The fixture has no speed histogram: a PD prefill should, so the UI is told.
    expect(keysOf(s.notExposed)).toEqual(['kv_transfer_speed_gb_s']);
    expect(s.notExposed[0].expected).toEqual(['sglang:kv_transfer_speed_gb_s']);
    expect(s.notes).toEqual([]);
  });

  it('newest decode (§7.2): decode queues, pending prealloc, failures; missing PD signals are listed', () => {
    const s = serverSignals(fixture('decode-newest.prom'), { role: 'decode' });
    expect(s.values.running).toBe(57);
    expect(s.values.gen_throughput).toBe(2311.7);
    expect(s.values.decode_prealloc_queue).toBe(1);
    expect(s.values.decode_transfer_queue).toBe(3);
    expect(s.values.pending_prealloc_token_usage).toBe(0.02);
    expect(s.values.transfer_failed_total).toBe(2);
    expect(s.values.prefill_bootstrap_queue).toBeNull();
    expect(s.kvTransferForm).toBeNull();
    // cache_hit_rate is not expected of decode: the gauge would only ever read ~0 there.
    expect(keysOf(s.notExposed)).toEqual(['kv_transfer_latency_ms', 'kv_transfer_speed_gb_s']);
  });

  it('never reads the cache_hit_rate gauge on decode, where every decode log zeroes it', () => {
    const text = `# TYPE sglang:cache_hit_rate gauge
sglang:cache_hit_rate{tp_rank="0"} 0.0
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{tp_rank="0"} 12
`;
    const decode = serverSignals(prom(text), { role: 'decode' });
    expect(decode.values.cache_hit_rate).toBeNull();
    expect(keysOf(decode.notExposed)).not.toContain('cache_hit_rate');
    // A prefill server's gauge is its last prefill batch's ratio and is read as such.
    const prefill = serverSignals(prom(text.replace('0.0', '0.42')), { role: 'prefill' });
    expect(prefill.values.cache_hit_rate).toBe(0.42);
  });

  it('autumn 2025 prefill: old prealloc queue name, gauge-era KV transfer, the running=0 misreading noted', () => {
    const s = serverSignals(fixture('prefill-2025-10.prom'), { role: 'prefill' });
    expect(s.values.prefill_bootstrap_queue).toBe(2);
    expect(s.values.prefill_inflight_queue).toBe(6);
    expect(s.kvTransferForm).toBe('gauge');
    expect(s.values.kv_transfer_speed_gb_s).toBe(18.5);
    expect(s.values.kv_transfer_latency_ms).toBe(27);
    expect(s.values.running).toBe(0);
    expect(s.notes.join(' ')).toMatch(/#31495/);
    expect(s.notExposed).toEqual([]);
  });

  it('sums dp ranks and collapses tp-rank replicas', () => {
    // dp0: 10 (tp_rank 0 and 1 repeat it), dp1: 25 → 10 + 25 = 35
    expect(serverSignals(fixture('decode-dp.prom')).values.running).toBe(35);
  });

  it('uses the priority="" totals instead of adding per-priority series to them', () => {
    const exp = prom(`
sglang:num_queue_reqs{priority="",tp_rank="0"} 7
sglang:num_queue_reqs{priority="0",tp_rank="0"} 3
sglang:num_queue_reqs{priority="1",tp_rank="0"} 4
`);
    expect(serverSignals(exp).values.queued).toBe(7);
  });

  it('histogram kv_transfer_* before the first transfer is null, not NaN', () => {
    const exp = prom(`
# TYPE sglang:kv_transfer_latency_ms histogram
sglang:kv_transfer_latency_ms_bucket{le="+Inf"} 0
sglang:kv_transfer_latency_ms_sum 0
sglang:kv_transfer_latency_ms_count 0
`);
    const s = serverSignals(exp, { role: 'decode' });
    expect(s.kvTransferForm).toBe('histogram');
    expect(s.values.kv_transfer_latency_ms).toBeNull();
    expect(keysOf(s.notExposed)).not.toContain('kv_transfer_latency_ms');
  });

  it('every key is present (null when absent) and nothing is expected of a router', () => {
    const s = serverSignals(fixture('router-smg.prom'), { role: 'router' });
    expect(Object.keys(s.values).sort()).toEqual([...SERVER_SIGNAL_KEYS].sort());
    expect(Object.values(s.values).every((v) => v === null)).toBe(true);
    expect(s.notExposed).toEqual([]);
  });

  it('without a role only the universal scheduler gauges are expected', () => {
    const s = serverSignals(prom('sglang:num_running_reqs 1\n'));
    expect(keysOf(s.notExposed)).toEqual(['cache_hit_rate', 'gen_throughput', 'queued']);
  });
});
