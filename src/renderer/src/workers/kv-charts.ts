// The KV charts of a fleet role's workers: one line per worker beside the role's total. A role of more
// workers than there are line colours is drawn as several charts of up to eight workers each, in id order, so
// a worker keeps its chart and colour while the table beside them re-sorts: one chart of 25 lines cost 9–40 ms
// per live update at 24 decode workers (bench/fleet-scale.ts), and its lines could not be told apart.
import { signalKey, type ServerRole, type SignalKey } from '@shared/signals/spec';
import { WORKER_COLORS, workerKey } from './keys';

/** One line, as TimeChart's SeriesSpec takes it (spelled here so the node-side tests need no JSX). */
export interface KvSeries {
  key: SignalKey;
  label: string;
  color: string;
  dash?: number[];
}

/** Workers per chart: one colour each. */
export const WORKERS_PER_CHART = WORKER_COLORS.length;

/** The role's workers (ids) in chart groups of up to WORKERS_PER_CHART, in id order. */
export function chartGroups(ids: readonly string[]): string[][] {
  const sorted = [...ids].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const groups: string[][] = [];
  for (let i = 0; i < sorted.length; i += WORKERS_PER_CHART)
    groups.push(sorted.slice(i, i + WORKERS_PER_CHART));
  return groups;
}

/**
 * The KV charts of a role: one when its workers fit the colours (id `fleet-kv-<role>`, as before there were
 * groups), else one per group of workers (`fleet-kv-<role>`, `fleet-kv-<role>-2`, …), each with the role's total.
 */
export function kvCharts(
  role: ServerRole,
  ids: readonly string[],
): { id: string; title: string; series: KvSeries[] }[] {
  const groups = chartGroups(ids);
  const total: KvSeries = {
    key: signalKey(role, 'kv_ratio'),
    label: `all ${role}`,
    color: '--text',
    dash: [6, 3],
  };
  return groups.map((group, g) => ({
    id: g === 0 ? `fleet-kv-${role}` : `fleet-kv-${role}-${g + 1}`,
    title:
      groups.length === 1
        ? `${role} KV usage per worker and in all`
        : `${role} KV usage: ${group[0]} … ${group[group.length - 1]}, and in all`,
    series: [
      ...group.map((id, i) => ({
        key: workerKey(signalKey(role, 'kv_ratio'), id),
        label: id,
        color: WORKER_COLORS[i % WORKER_COLORS.length],
      })),
      total,
    ],
  }));
}
