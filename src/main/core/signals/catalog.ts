// The catalogue of one deployment: every signal key its roles, dp ranks and GPUs can show, with the label,
// unit, source and caveat the renderer formats and labels charts by. Everything here comes from the signal
// specification (src/shared/signals/spec.ts).
import type { SignalInfo } from '@shared/contract';
import type { Role } from '@shared/domain';
import { GPU_SIGNALS, kvRankKey, specsFor, type ServerRole, type SignalKey } from '@shared/signals/spec';

/** The families whose presence means the server exposes `signal` (for the "not exposed" hints). */
export function expectedMetrics(role: Role, signal: string): string[] | undefined {
  const m = specsFor(role)[signal]?.metrics;
  return m ? [...m] : undefined;
}

/** The catalogue of a deployment: every role's signals, its dp ranks' KV ratios and the GPUs it has seen. */
export function catalogFor(
  roles: readonly Role[],
  gpuIndices: readonly number[],
  kvRanks: Partial<Record<Role, readonly string[]>> = {},
): SignalInfo[] {
  const out: SignalInfo[] = [];
  for (const role of roles)
    for (const [name, d] of Object.entries(specsFor(role)))
      out.push({
        key: `${role}.${name}` as SignalKey,
        label: `${role} ${d.label}`,
        unit: d.unit,
        source: d.source,
        caveat: d.caveat,
      });
  for (const role of roles) {
    if (role === 'router') continue;
    for (const rank of kvRanks[role] ?? [])
      out.push({
        key: kvRankKey(role as ServerRole, rank),
        label: `${role} KV usage, dp rank ${rank}`,
        unit: 'ratio',
        source: `the dp_rank="${rank}" series of the KV source, over that rank’s own capacity`,
      });
  }
  for (const i of gpuIndices)
    for (const [name, d] of Object.entries(GPU_SIGNALS))
      out.push({
        key: `gpu.${i}.${name}` as SignalKey,
        label: `GPU ${i} ${d.label}`,
        unit: d.unit,
        source: d.source,
      });
  return out;
}
