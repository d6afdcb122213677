// The figures an operator greps for, per service, from the dashboard's signal store: router requests/s,
// 5xx share and latency quantiles; servers' running and queued requests and generation tokens/s. A figure
// that is not there is null with the reason: the metric this version lacks, or a scrape that failed.
import type { SignalMissing } from '@shared/contract';
import type { Role, ServiceObservation } from '@shared/domain';
import { specsFor, type SignalKey } from '@shared/signals/spec';
import { scopedKey } from '@shared/signals/scoped-key';
import type { ServerEra } from './era-of';

export const ROUTER_HEADLINE = {
  requestsPerSecond: 'router_requests_per_s',
  errorShare: 'router_error_share',
  latencyP50Seconds: 'router_latency_p50_s',
  latencyP99Seconds: 'router_latency_p99_s',
} as const;

export const SERVER_HEADLINE = {
  running: 'running',
  queued: 'queued',
  generationTokensPerSecond: 'generation_tokens_per_s',
} as const;

export interface Headline {
  signals: Record<string, number | null>;
  /** For every null figure: why, naming the metric that would give it. */
  why: Record<string, string>;
}

export interface HeadlineInput {
  /** The store's latest values (`<role>.<signal>@<worker>`). */
  values: Record<string, number | null>;
  notExposed: Record<string, SignalMissing>;
  /** Scrapes of this role seen in the window. */
  scrapes: number;
  /** The deployment names a /metrics URL for this service. */
  metricsConfigured: boolean;
  /** The server era its last scrape reads as (era-of.ts), where known. */
  era?: ServerEra | null;
}

export function headlineOf(s: ServiceObservation, input: HeadlineInput): Headline {
  const fields: Record<string, string> = s.role === 'router' ? ROUTER_HEADLINE : SERVER_HEADLINE;
  const signals: Record<string, number | null> = {};
  const why: Record<string, string> = {};
  for (const [field, signal] of Object.entries(fields)) {
    const v = input.values[keyOf(s, signal)];
    if (signal === 'running' && s.role === 'prefill' && input.era && input.era !== 'E4') {
      // A 0 that the server never set is not "idle": say so instead of printing it.
      signals[field] = null;
      why[field] =
        'SGLang before E4 never sets sglang:num_running_reqs on a PD prefill server (it reads 0; ' +
        'fixed by SGLang PR #31495, the newest metrics era)';
      continue;
    }
    signals[field] = v ?? null;
    if (v === null || v === undefined) why[field] = whyMissing(s, signal, input);
  }
  return { signals, why };
}

/** The store's key of this service's signal: every worker's series carries its id. */
const keyOf = (s: ServiceObservation, signal: string): string =>
  scopedKey(`${s.role}.${signal}` as SignalKey, s.id);

function whyMissing(s: ServiceObservation, signal: string, input: HeadlineInput): string {
  if (!input.metricsConfigured) return `${s.role} has no metrics endpoint configured`;
  if (s.metrics && !s.metrics.ok) return `no scrape: ${s.metrics.error}`;
  const ne = input.notExposed[keyOf(s, signal)];
  if (ne) return `${ne.why}; expected ${ne.expected.join(' or ')}`;
  const def = specsFor(s.role as Role)[signal];
  // Rates, quantiles and window ratios need two scrapes; gauges need one.
  const windowed = def?.kind === 'rate' || def?.kind === 'quantile' || def?.kind === 'ratio';
  if (windowed && input.scrapes < 2)
    return `needs two scrapes of ${def?.source ?? signal}; only ${input.scrapes} so far (try a longer --wait)`;
  return windowed
    ? `no traffic in the window: ${def?.source ?? signal} did not change between scrapes`
    : `not in this scrape: ${def?.source ?? signal}`;
}
