// The dashboard's snapshot of one moment, built one way for the live view (services/dashboard.ts: the signal
// store at the newest round) and for review (review/state-at.ts: the recording's signal table at the cursor):
// the values, each role's KV figures named by their source, the queues' growth and the verdict over them, and
// what the moment's reader adds (GPUs, alerts, families).
import type { DashboardSnapshot, RouterWorkerState, SignalMissing } from '@shared/contract';
import type { Role } from '@shared/domain';
import { QUEUE_KEYS } from '@shared/signals/spec';
import type { VerdictInput } from './verdict';
import { kvDetail } from './kv-detail';
import type { KvMeta } from './signals-store';
import type { FleetWorker } from '@shared/worker-names';

/** What a snapshot reads of the deployment's signals at its moment. */
export interface SnapshotSignals {
  values: Record<string, number | null>;
  /** Change of a queue key over the `ms` before the moment. */
  growth(key: string, ms: number): number | null;
  /** The KV source that names a role's figures at the moment. */
  kvMeta(role: Role): Pick<KvMeta, 'source' | 'sourceMetrics' | 'caveat'> | undefined;
  routerWorkers: RouterWorkerState[] | undefined;
  notExposed: Record<string, SignalMissing>;
}

/** The moment and what its reader knows beside the signals. */
export interface SnapshotMoment extends Pick<
  DashboardSnapshot,
  'gpu' | 'alerts' | 'pendingAlerts' | 'families'
> {
  deploymentId: string;
  ts: number;
  roles: Role[];
  /** A fleet's workers with their hosts, for the verdict to name both. */
  workers: FleetWorker[] | undefined;
}

/** Queue growth is read over the two minutes before the moment. */
const GROWTH_MS = 120_000;

export function dashboardSnapshot(
  signals: SnapshotSignals,
  moment: SnapshotMoment,
  judge: (
    input: Pick<VerdictInput, 'values' | 'growth' | 'roles' | 'workers' | 'routerWorkers'>,
  ) => DashboardSnapshot['verdict'],
): DashboardSnapshot {
  const { values, routerWorkers } = signals;
  const growth: Record<string, number | null> = {};
  for (const k of QUEUE_KEYS) growth[k] = signals.growth(k, GROWTH_MS);
  const { deploymentId, ts, roles, workers, gpu, alerts, pendingAlerts, families } = moment;
  return {
    deploymentId,
    ts,
    values,
    kv: roles.filter((r) => r !== 'router').map((role) => kvDetail(role, values, signals.kvMeta(role))),
    verdict: judge({
      values,
      growth,
      roles,
      ...(workers ? { workers } : {}),
      ...(routerWorkers ? { routerWorkers } : {}),
    }),
    gpu,
    alerts,
    ...(pendingAlerts && pendingAlerts.length > 0 ? { pendingAlerts } : {}),
    notExposed: signals.notExposed,
    ...(families ? { families } : {}),
    ...(routerWorkers ? { routerWorkers } : {}),
  };
}
