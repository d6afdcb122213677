// The prefill → decode link's figures. In the eras where SGLang exports the KV transfer speed and latency as
// gauges (upstream sglang-real-metrics.tsv: GAUGE @93d04878 and @44cedc2b), prefill sets them at each transfer
// and they keep the last transfer's value: with every decode worker down the link read a steady 19 GB/s, as if
// KV were flowing. With no worker serving on either side the figures are shown as the last ones, and why.
import type { Observation, Role } from '@shared/domain';
import type { SignalKey } from '@shared/signals/spec';

export interface TransferFigures {
  gbPerS: number | null;
  latencyMs: number | null;
  failuresPerMin: number;
  /** PD roles with workers and none of them serving now: the speed and latency are then the last reported. */
  notServing: Array<'prefill' | 'decode'>;
}

/** Serving: systemd says active and /health did not fail (not checked yet counts, as on the role groups). */
function roleServing(latest: Observation | undefined, role: Role): boolean | undefined {
  const mine = latest?.services.filter((s) => s.role === role) ?? [];
  if (mine.length === 0) return undefined;
  return mine.some((s) => s.systemd?.activeState === 'active' && s.health?.ok !== false);
}

export function transferFigures(
  value: (k: SignalKey) => number | null,
  latest?: Observation,
): TransferFigures {
  return {
    // Prefill sends the KV, so it is the side that reports transfer speed and latency.
    gbPerS: value('prefill.kv_transfer_gb_s') ?? value('decode.kv_transfer_gb_s'),
    latencyMs:
      value('prefill.kv_transfer_latency_p50_ms') ??
      value('prefill.kv_transfer_latency_ms') ??
      value('decode.kv_transfer_latency_p50_ms') ??
      value('decode.kv_transfer_latency_ms'),
    failuresPerMin:
      (value('prefill.transfer_failed_per_min') ?? 0) + (value('decode.transfer_failed_per_min') ?? 0),
    notServing: (['prefill', 'decode'] as const).filter((r) => roleServing(latest, r) === false),
  };
}
