// Signals of the router / model gateway over the columns of its scrapes, in every router era
// (shared/reference/upstream/README.md): smg (requests from smg_router_requests_total; the error share from
// smg_http_responses_total on traffic paths from smg 1.5, whose path label tells the console's own polls apart,
// and from smg_router_request_errors_total / smg_router_requests_total before it), and sglang-router ≤ 0.2.4,
// which in PD mode records only sgl_router_pd_* (the unprefixed request counters and histogram are the
// regular router's).
import { SGL_ROUTER as R, SGL_ROUTER_PD_ERRORS, SMG } from '@shared/signals/metric-names';
import { ROUTER_SIGNALS, type SignalSpec } from '@shared/signals/spec';
import { isControlPath } from '../../probes/sglang/control-paths';
import type { TargetColumns } from '../../review/target-columns';
import { anyInWindow, windowQuantiles, windowSum, type LabelFilter } from '../window-math';
import { routerWorkerRows, workerCounts, type RouterEra } from './router-workers';
import { tailColumns, widen } from './tail';
import type { EvaluateOptions, TargetSignals } from './types';
import { f64, i8 } from '../scratch-arrays';

const trafficOnly: LabelFilter = (l) => !isControlPath(l.path ?? l.route);
const is5xx = (l: Record<string, string>): boolean => /^5\d\d$/.test(l.status_code ?? '');

/** Signals of the router (smg or sglang-router) at every row from `opts.from` on. */
export function routerSignalColumns(cols: TargetColumns, opts: EvaluateOptions = {}): TargetSignals {
  const w = opts.rateWindowMs ?? 60_000;
  const from = opts.from ?? 0;
  const n = cols.rows;
  const values = new Map<string, Float64Array>();
  const rate = (name: string, filter?: LabelFilter): Float64Array =>
    windowSum(cols, name, w, { rate: true, filter, from });
  const inc = (name: string, filter?: LabelFilter): Float64Array =>
    windowSum(cols, name, w, { filter, from });
  const column = (f: (i: number) => number): Float64Array => {
    const out = f64(n, NaN);
    for (let i = from; i < n; i++) out[i] = f(i);
    return out;
  };
  const share = (part: Float64Array, whole: Float64Array): Float64Array =>
    column((i) => (whole[i] > 0 ? Math.min(1, (part[i] === part[i] ? part[i] : 0) / whole[i]) : NaN));
  const first = (a: Float64Array, b: Float64Array): Float64Array =>
    column((i) => (a[i] === a[i] ? a[i] : b[i]));

  const smgHere = anyInWindow(cols, SMG.routerRequestsTotal, w, undefined, from);
  const smgResponses = anyInWindow(cols, SMG.httpResponsesTotal, w, undefined, from);
  const pdHere = anyInWindow(cols, R.pdRequestsTotal, w, undefined, from);
  const era = (i: number): 'smg' | 'pd' | 'regular' =>
    smgHere[i] || smgResponses[i] ? 'smg' : pdHere[i] ? 'pd' : 'regular';

  const smgRequests = first(rate(SMG.routerRequestsTotal), rate(SMG.httpRequestsTotal, trafficOnly));
  const pdRequests = rate(R.pdRequestsTotal);
  const regularRequests = rate(R.requestsTotal, trafficOnly);
  const requests = column((i) => {
    const e = era(i);
    return e === 'smg' ? smgRequests[i] : e === 'pd' ? pdRequests[i] : regularRequests[i];
  });

  // smg ≥ 1.5 labels its responses by path: the 5xx share of traffic paths, the console's polls left out.
  // Before 1.5 those polls cannot be told apart in smg_http_responses_total, so the share is read from the
  // routed requests' own counters instead (errors of any kind over routed requests).
  const pathLabelled = anyInWindow(cols, SMG.httpResponsesTotal, w, (l) => l.path !== undefined, from);
  const smg5xxShare = share(
    inc(SMG.httpResponsesTotal, (l) => trafficOnly(l) && is5xx(l)),
    inc(SMG.httpResponsesTotal, trafficOnly),
  );
  const smgRoutedShare = share(inc(SMG.routerRequestErrorsTotal), inc(SMG.routerRequestsTotal));
  const smgShare = column((i) => (pathLabelled[i] ? smg5xxShare[i] : smgRoutedShare[i]));
  const upstreamAll = inc(R.upstreamHttpResponsesTotal, trafficOnly);
  const upstreamShare = share(
    inc(R.upstreamHttpResponsesTotal, (l) => trafficOnly(l) && is5xx(l)),
    upstreamAll,
  );
  const pdErrors = f64(n, NaN);
  for (const name of SGL_ROUTER_PD_ERRORS) {
    const col = inc(name);
    for (let i = from; i < n; i++)
      if (col[i] === col[i]) pdErrors[i] = (pdErrors[i] === pdErrors[i] ? pdErrors[i] : 0) + col[i];
  }
  const pdShare = share(pdErrors, inc(R.pdRequestsTotal));
  const regularShare = share(inc(R.requestErrorsTotal, trafficOnly), inc(R.requestsTotal, trafficOnly));
  const errorShare = column((i) => {
    const e = era(i);
    if (e === 'smg') return smgShare[i];
    if (upstreamAll[i] === upstreamAll[i]) return upstreamShare[i];
    return e === 'pd' ? pdShare[i] : regularShare[i];
  });

  // Latency: the era's histogram (specification order smg, PD, regular), picked by the era of the row.
  const latency = Object.entries(ROUTER_SIGNALS).filter(([, s]) => s.kind === 'quantile') as [
    string,
    SignalSpec,
  ][];
  const [smgBase, pdBase, regularBase] = latency[0][1].metrics ?? [];
  const qs = latency.map(([, s]) => s.q ?? NaN);
  const bySmg = windowQuantiles(cols, smgBase, qs, w, undefined, from);
  const byPd = windowQuantiles(cols, pdBase, qs, w, undefined, from);
  const byRegular = windowQuantiles(cols, regularBase, qs, w, undefined, from);
  latency.forEach(([key], k) =>
    values.set(
      key,
      column((i) => {
        const e = era(i);
        return (e === 'smg' ? bySmg : e === 'pd' ? byPd : byRegular)[k][i];
      }),
    ),
  );

  values.set('router_requests_per_s', requests);
  values.set('router_error_share', errorShare);
  values.set(
    'router_errors_per_s',
    column((i) => requests[i] * errorShare[i]),
  );
  // Workers are point-in-time: read over the rows asked for only.
  const gauges = workerEra(cols);
  const workers = gauges ? routerWorkerRows(tailColumns(cols, from), gauges) : undefined;
  if (workers) {
    const counts = workerCounts(workers);
    values.set('workers_total', widen(counts.total, n, from));
    values.set('workers_healthy', widen(counts.healthy, n, from));
  }
  return {
    role: 'router',
    values,
    kvSource: i8(n, -1),
    kvMetas: [],
    ...(workers ? { workers, workersFrom: from } : {}),
  };
}

/** The router's worker gauges' era, by the families it served: smg_* or sgl_router_*. */
function workerEra(cols: TargetColumns): RouterEra | null {
  const names = cols.names();
  return names.some((x) => x.startsWith('smg_'))
    ? 'smg'
    : names.some((x) => x.startsWith(R.prefix))
      ? 'sgl_router'
      : null;
}
