// The prefill → decode link's figures. In the eras where SGLang exports the KV transfer speed and latency as
// gauges (upstream sglang-real-metrics.tsv: GAUGE @93d04878 and @44cedc2b), prefill sets them at each transfer
// and they keep the last transfer's value: with every decode worker down the link read a steady 19 GB/s, as if
// KV were flowing. With no worker serving on either side the figures are shown as the last ones, and why. A
// side none of whose workers can be read now (the link to its hosts down) is not "not serving": it is unknown,
// since the last reading of it.
import type { Observation, Role, ServiceObservation } from '@shared/domain';
import type { SignalKey } from '@shared/signals/spec';

export interface TransferFigures {
  gbPerS: number | null;
  latencyMs: number | null;
  failuresPerMin: number;
  /** PD roles with workers and none of them serving now: the speed and latency are then the last reported. */
  notServing: Array<'prefill' | 'decode'>;
  /**
   * PD roles none of whose workers serve as far as can be read, some of them not readable now: whether they
   * serve is unknown; `since` is their newest last reading (null: none was ever read).
   */
  unknown: Array<{ role: 'prefill' | 'decode'; since: number | null }>;
}

/** Serving: systemd says active and /health did not fail (not checked yet counts, as on the role groups). */
function serving(s: ServiceObservation): boolean {
  return s.systemd?.activeState === 'active' && s.health?.ok !== false;
}

/** Not readable now: no systemd state, and the reading says why or what was seen before. */
function unread(s: ServiceObservation): boolean {
  return !s.systemd && (s.systemdError !== undefined || s.lastSeen !== undefined);
}

function roleState(
  latest: Observation | undefined,
  role: Role,
): 'serving' | 'not-serving' | { since: number | null } | undefined {
  const mine = latest?.services.filter((s) => s.role === role) ?? [];
  if (mine.length === 0) return undefined;
  if (mine.some(serving)) return 'serving';
  const blind = mine.filter(unread);
  if (blind.length === 0) return mine.some((s) => s.systemd) ? 'not-serving' : undefined;
  const seen = blind.map((s) => s.lastSeen?.ts).filter((t): t is number => t !== undefined);
  return { since: seen.length ? Math.max(...seen) : null };
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
    notServing: (['prefill', 'decode'] as const).filter((r) => roleState(latest, r) === 'not-serving'),
    unknown: (['prefill', 'decode'] as const).flatMap((role) => {
      const st = roleState(latest, role);
      return typeof st === 'object' ? [{ role, since: st.since }] : [];
    }),
  };
}
