// The workers a router lists, read from its per-worker gauges at every row of its columns — the one reading
// behind both the workers_total / workers_healthy signals (every row, for charts and review) and the worker
// table of the dashboard and the restart checks (one row: routerHealthFromMetrics). Per-worker gauges are keyed
// by the `worker` label (`worker_url` in the 2026-06 in-tree router); health 1 healthy, 0 not, −1 removed;
// circuit breaker 0 closed, 1 open, 2 half-open, −1 removed.
import type { RouterWorkerState } from '@shared/contract';
import { SGL_ROUTER as R, SMG } from '@shared/signals/metric-names';
import { normalizeWorkerUrl } from '@shared/worker-url';
import { rowAt, valueIndexAt, type AlignedSeries, type TargetColumns } from '../../review/target-columns';
import { f64, u8 } from '../scratch-arrays';

export type RouterEra = 'smg' | 'sgl_router';

const HEALTH = { smg: SMG.workerHealth, sgl_router: R.workerHealth } as const;
const CB = { smg: SMG.workerCbState, sgl_router: R.cbState } as const;
const ACTIVE = { smg: SMG.workerRequestsActive, sgl_router: R.runningRequests } as const;
const PD_ROLE_COUNTERS = [
  [R.pdPrefillRequestsTotal, 'prefill'],
  [R.pdDecodeRequestsTotal, 'decode'],
] as const;

/** Whether a family is one the worker reading looks at (what one-row columns of a scrape need to keep). */
export function isWorkerInput(name: string): boolean {
  return (
    Object.values(HEALTH).includes(name as never) ||
    Object.values(CB).includes(name as never) ||
    Object.values(ACTIVE).includes(name as never) ||
    name.startsWith(SMG.enginePrefix) ||
    PD_ROLE_COUNTERS.some(([n]) => n === name)
  );
}

/** Per worker (normalised URL) and row: whether any gauge lists it, its health, removal, breaker, load, role. */
export interface WorkerRows {
  rows: number;
  urls: string[];
  seen: Uint8Array[];
  /** 1 healthy, 0 not, NaN unknown. */
  health: Float64Array[];
  removed: Uint8Array[];
  /** The circuit-breaker gauge as served (NaN = none). */
  cb: Float64Array[];
  active: Float64Array[];
  /** Series that name a worker's role, in scrape order (the last with a value at a row wins). */
  roles: { role: string; series: AlignedSeries }[][];
}

export function routerWorkerRows(cols: TargetColumns, era: RouterEra): WorkerRows {
  const n = cols.rows;
  const ids = new Map<string, number>();
  const w: WorkerRows = {
    rows: n,
    urls: [],
    seen: [],
    health: [],
    removed: [],
    cb: [],
    active: [],
    roles: [],
  };
  const idOf = (labels: Record<string, string>): number => {
    const raw = labels.worker ?? labels.worker_url;
    if (!raw) return -1;
    const url = normalizeWorkerUrl(raw);
    let id = ids.get(url);
    if (id === undefined) {
      ids.set(url, (id = w.urls.length));
      w.urls.push(url);
      w.seen.push(u8(n));
      w.health.push(f64(n, NaN));
      w.removed.push(u8(n));
      w.cb.push(f64(n, NaN));
      w.active.push(f64(n, NaN));
      w.roles.push([]);
    }
    return id;
  };
  const each = (name: string, f: (id: number, row: number, v: number) => void): void => {
    for (const s of cols.series(name)) {
      const id = idOf(s.labels);
      if (id < 0) continue;
      for (let k = 0; k < s.v.length; k++) f(id, rowAt(s, k), s.v[k]);
    }
  };
  each(HEALTH[era], (id, r, v) => {
    w.seen[id][r] = 1;
    if (v < 0) {
      w.removed[id][r] = 1;
      w.health[id][r] = 0;
    } else w.health[id][r] = v >= 1 ? 1 : 0;
  });
  each(CB[era], (id, r, v) => {
    w.seen[id][r] = 1;
    w.cb[id][r] = v;
    if (v === -1) {
      w.removed[id][r] = 1;
      w.health[id][r] = 0;
    }
  });
  each(ACTIVE[era], (id, r, v) => {
    w.seen[id][r] = 1;
    w.active[id][r] = v;
  });
  // Roles: smg names them only on the --engine-metrics gauges; the old router had per-role PD counters.
  const roleSeries: [string, (s: AlignedSeries) => string | undefined][] =
    era === 'smg'
      ? cols
          .names()
          .filter((x) => x.startsWith(SMG.enginePrefix))
          .map((name) => [name, (s) => s.labels.role || undefined])
      : PD_ROLE_COUNTERS.map(([name, role]) => [name, () => role]);
  for (const [name, roleOf] of roleSeries)
    for (const s of cols.series(name)) {
      const role = roleOf(s);
      if (!role) continue;
      const id = idOf(s.labels);
      if (id < 0) continue;
      w.roles[id].push({ role, series: s });
      for (let k = 0; k < s.v.length; k++) w.seen[id][rowAt(s, k)] = 1;
    }
  return w;
}

/** Workers listed and healthy at every row (removed workers are not counted). */
export function workerCounts(w: WorkerRows): { total: Float64Array; healthy: Float64Array } {
  const total = f64(w.rows);
  const healthy = f64(w.rows);
  for (let id = 0; id < w.urls.length; id++)
    for (let i = 0; i < w.rows; i++) {
      if (!w.seen[id][i] || w.removed[id][i]) continue;
      total[i]++;
      if (w.health[id][i] === 1) healthy[i]++;
    }
  return { total, healthy };
}

const CB_STATES: Record<number, RouterWorkerState['cbState']> = {
  0: 'closed',
  1: 'open',
  2: 'half_open',
  [-1]: 'removed',
};

/** The workers seen at row i, removed ones included (marked), by URL. */
export function workersAt(w: WorkerRows, i: number): RouterWorkerState[] {
  const out: RouterWorkerState[] = [];
  for (let id = 0; id < w.urls.length; id++) {
    if (!w.seen[id][i]) continue;
    const h = w.health[id][i];
    const worker: RouterWorkerState = { url: w.urls[id], healthy: h === h ? h === 1 : null };
    const cbState = CB_STATES[w.cb[id][i]];
    if (cbState) worker.cbState = cbState;
    if (w.removed[id][i]) worker.removed = true;
    const active = w.active[id][i];
    if (active === active) worker.activeRequests = active;
    let role: string | undefined;
    for (const r of w.roles[id]) if (valueIndexAt(r.series, i) >= 0) role = r.role;
    if (role) worker.role = role;
    out.push(worker);
  }
  return out.sort((a, b) => a.url.localeCompare(b.url));
}
