// The recorded GPU readings of a session (host-series.ts) as review's group of each host (`gpu@<host>`): the same
// keys the live store keeps (`gpu.<index>.<field>@<host>`), one row per nvidia-smi reading, so the GPU page draws
// a recording the way it draws the live hosts. A recording made before GPUs were recorded simply has none.
import type { GpuReading, GpuStatus } from '@shared/contract';
import { GPU_FIELDS, GPU_TARGET, type GpuField } from '../recording/host-series';
import type { TargetColumns } from './target-columns';
import { rowAt } from './target-columns';
import type { GroupColumns, SignalTable } from './signal-table';

export const GPU_GROUP = 'gpu';

/**
 * A host's GPU group of the signal table (its target `gpu@<host>`, the live store's keys
 * `gpu.<index>.<field>@<host>`), or null when the recording holds no GPU readings of it.
 */
export function gpuGroup(targets: ReadonlyMap<string, TargetColumns>, host: string): GroupColumns | null {
  const cols = targets.get(`${GPU_TARGET}@${host}`);
  const suffix = `@${host}`;
  if (!cols || cols.rows === 0) return null;
  const out = new Map<string, Float32Array>();
  for (const [field, def] of Object.entries(GPU_FIELDS) as [GpuField, (typeof GPU_FIELDS)[GpuField]][]) {
    for (const s of cols.series(def.family)) {
      const index = s.labels.gpu;
      if (!/^\d+$/.test(index ?? '')) continue;
      const col = new Float32Array(cols.rows).fill(NaN);
      for (let k = 0; k < s.v.length; k++) col[rowAt(s, k)] = s.v[k];
      out.set(`gpu.${index}.${field}${suffix}`, col);
    }
  }
  return out.size ? { t: cols.t, cols: out } : null;
}

/** GPU indices with a column in the table (in a fleet, on any host), ascending. */
export function gpuIndices(table: SignalTable, group: string = GPU_GROUP): number[] {
  const seen = new Set<number>();
  for (const [name, g] of table.groups)
    if (name === group || (group === GPU_GROUP && name.startsWith(`${GPU_GROUP}@`)))
      for (const key of g.cols.keys()) seen.add(Number(key.split('.')[1]));
  return [...seen].sort((a, b) => a - b);
}

/** The GPU table at a moment of the recording: the last reading at or before `ts`. */
export function gpuStatusAt(table: SignalTable, ts: number, group: string = GPU_GROUP): GpuStatus {
  const g = table.groups.get(group);
  const suffix = group === GPU_GROUP ? '' : group.slice(GPU_GROUP.length);
  if (!g)
    return {
      ts: null,
      gpus: [],
      error: 'this recording holds no GPU readings',
      hint: 'Recordings made by PD Console 0.1 before GPU recording, or of a host without nvidia-smi, have none.',
    };
  const k = table.rowAtOrBefore(group, ts);
  if (k < 0) return { ts: null, gpus: [] };
  const v = (i: number, f: GpuField): number | null => {
    const x = g.cols.get(`gpu.${i}.${f}${suffix}`)?.[k];
    return x === undefined || Number.isNaN(x) ? null : x;
  };
  const mib = (x: number | null): number | null => (x === null ? null : Math.round(x / (1024 * 1024)));
  const gpus: GpuReading[] = gpuIndices(table, group).map((i) => ({
    index: i,
    utilPct: v(i, 'util'),
    memUsedMiB: mib(v(i, 'mem_used')),
    memTotalMiB: mib(v(i, 'mem_total')),
    tempC: v(i, 'temp'),
    powerW: v(i, 'power'),
  }));
  return { ts: g.t[k], gpus };
}

/** Each host's GPU table at a moment of the recording, by host id: the recording keeps a group per host (`gpu@<host>`). */
export function gpuStatusesAt(
  table: SignalTable,
  ts: number,
  hosts: readonly string[],
): Record<string, GpuStatus> {
  return Object.fromEntries(hosts.map((h) => [h, gpuStatusAt(table, ts, `${GPU_GROUP}@${h}`)]));
}
