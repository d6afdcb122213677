// Which SGLang server or router version an exposition comes from, told by the families that distinguish the
// eras (docs/architecture.md "Metric eras the demo host speaks"), and which headline families it lacks with
// the version or flag that adds them — so `pd-console metrics` can say why a figure is missing — and which
// families no supported era lists (a newer version's, "not understood by this PD Console version").
import type { Role } from '@shared/domain';
import type { Exposition } from '../core/probes/exposition/types';
import type { DemoRouterEra, DemoServerEra } from '@shared/api/monitoring';
import { censusOf } from '../core/signals/family-census';
import { SGLANG, SGL_ROUTER, SMG } from '@shared/signals/metric-names';

/** The demo host speaks exactly these eras, so their names are the demo's. */
export type ServerEra = DemoServerEra;
export type RouterEra = DemoRouterEra;

export interface EraReading {
  /** null: none of the era's marker families is there (not an SGLang server / router exposition). */
  era: ServerEra | RouterEra | null;
  /** What the era is, and which families told. */
  because: string;
  /** Headline families this endpoint lacks, each with what would add it. */
  missing: Array<{ family: string; addedBy: string }>;
  /** Families a supported era lists that the console reads nothing from (names; count in the human output). */
  notUsed: string[];
  /** SGLang / router families no supported era lists: "not understood by this PD Console version". */
  unknown: string[];
  /** Families of other exporters on the same endpoint (python_*, process_*…): not SGLang's. */
  otherExporters: string[];
}

const SERVER_ERA_TEXT: Record<ServerEra, string> = {
  E1: 'SGLang autumn 2025 (metrics/collector.py @93d04878)',
  E2: 'SGLang early 2026 (observability/metrics_collector.py @44cedc2b)',
  E3: 'SGLang @00eef542 (scheduler_metrics_mixin.py)',
  E4: 'SGLang newest (observability/metrics_collector.py @016d8605)',
};

const ROUTER_ERA_TEXT: Record<RouterEra, string> = {
  'sglang-router-0.2.4': 'sglang-router ≤ 0.2.4 in PD mode',
  'smg-0.3': 'SGLang Model Gateway (smg) 0.3 … 1.4',
  'smg-1.5': 'smg 1.5 or later',
  'smg-engine-metrics': 'smg 1.7 or later started with --engine-metrics',
};

const FIRST_INCREMENT =
  'appears after the first request of its kind (labelled counters start at first increment)';

/** Server headline families, and what adds each where it is missing. Era-dependent ones name the era. */
const SERVER_HEADLINE: Array<{ family: string; since?: ServerEra; addedBy: string }> = [
  { family: SGLANG.runningReqs, addedBy: 'every SGLang version started with --enable-metrics' },
  { family: SGLANG.queueReqs, addedBy: 'every SGLang version started with --enable-metrics' },
  { family: SGLANG.generationTokensTotal, addedBy: FIRST_INCREMENT },
  { family: SGLANG.maxTotalNumTokens, since: 'E2', addedBy: `KV capacity gauge: ${SERVER_ERA_TEXT.E2}` },
  { family: SGLANG.fullTokenUsage, since: 'E3', addedBy: `exact KV usage ratio: ${SERVER_ERA_TEXT.E3}` },
  { family: SGLANG.kvUsedTokens, since: 'E4', addedBy: `KV token counts: ${SERVER_ERA_TEXT.E4}` },
];

const ERA_ORDER: ServerEra[] = ['E1', 'E2', 'E3', 'E4'];

const has = (names: ReadonlySet<string>, prefix: string): boolean => {
  for (const n of names) if (n.startsWith(prefix)) return true;
  return false;
};

export function serverEraOf(names: ReadonlySet<string>): ServerEra | null {
  if (names.has(SGLANG.kvUsedTokens)) return 'E4';
  if (names.has(SGLANG.fullTokenUsage)) return 'E3';
  if (names.has(SGLANG.maxTotalNumTokens)) return 'E2';
  return has(names, 'sglang:') ? 'E1' : null;
}

/** `pathLabel`: smg_http_responses_total carries a `path` label (smg ≥ 1.5). */
export function routerEraOf(names: ReadonlySet<string>, pathLabel: boolean): RouterEra | null {
  if (has(names, SGL_ROUTER.pdPrefix)) return 'sglang-router-0.2.4';
  if (has(names, SMG.enginePrefix)) return 'smg-engine-metrics';
  if (!has(names, 'smg_')) return null;
  return pathLabel ? 'smg-1.5' : 'smg-0.3';
}

/** Reads one scrape of `role`'s /metrics. */
export function readEra(role: Role, exp: Exposition): EraReading {
  const names = new Set(exp.families.map((f) => f.name));
  const { knownNotUsed: notUsed, unknown, otherExporters } = censusOf(exp);
  const families = { notUsed, unknown, otherExporters };
  if (role !== 'router') {
    const era = serverEraOf(names);
    const because =
      era === null
        ? 'no sglang:* family: this is not an SGLang server’s /metrics'
        : `${SERVER_ERA_TEXT[era]}: ${
            {
              E4: 'it has sglang:kv_used_tokens',
              E3: 'it has sglang:full_token_usage but not sglang:kv_used_tokens',
              E2: 'it has sglang:max_total_num_tokens but not sglang:full_token_usage',
              E1: 'it has neither sglang:max_total_num_tokens nor sglang:full_token_usage',
            }[era]
          }`;
    const missing = SERVER_HEADLINE.filter(
      (h) =>
        !names.has(h.family) &&
        // A family of a later era is "missing" only in the eras before it; kv_used_tokens replaces the others.
        (h.since === undefined || era === null || ERA_ORDER.indexOf(era) < ERA_ORDER.indexOf(h.since)),
    ).map(({ family, addedBy }) => ({ family, addedBy }));
    return { era, because, missing, ...families };
  }
  const responses = exp.families.find((f) => f.name === SMG.httpResponsesTotal);
  const pathLabel = !!responses?.samples.some((s) => 'path' in s.labels);
  const era = routerEraOf(names, pathLabel);
  const missing: EraReading['missing'] = [];
  if (era === 'sglang-router-0.2.4') {
    for (const f of [SGL_ROUTER.pdRequestsTotal, SGL_ROUTER.pdRequestDuration])
      if (!names.has(f)) missing.push({ family: f, addedBy: FIRST_INCREMENT });
    missing.push({
      family: 'smg_http_responses_total{path}',
      addedBy: 'error share without the console’s own polls: smg 1.5 or later',
    });
  } else if (era !== null) {
    for (const f of [SMG.routerRequestsTotal, SMG.routerRequestDuration])
      if (!names.has(f)) missing.push({ family: f, addedBy: FIRST_INCREMENT });
    if (era === 'smg-0.3')
      missing.push({
        family: 'smg_http_responses_total{path}',
        addedBy:
          'the path label (a 5xx share per path; before it the error share is read from smg_router_request_errors_total): smg 1.5 or later',
      });
  }
  if (era !== null && era !== 'smg-engine-metrics')
    missing.push({
      family: 'smg_engine_*',
      addedBy: 'per-worker engine load gauges: smg 1.7 or later started with --engine-metrics',
    });
  const because =
    era === null
      ? 'no sgl_router_* or smg_* family: this is not a router’s Prometheus port'
      : `${ROUTER_ERA_TEXT[era]}: ${
          {
            'sglang-router-0.2.4': 'it has sgl_router_pd_* families',
            'smg-engine-metrics': 'it has smg_engine_* families',
            'smg-1.5': 'smg_http_responses_total has a path label',
            'smg-0.3': responses
              ? 'smg_http_responses_total has no path label'
              : 'smg_* families without smg_http_responses_total (no response counted yet), so ≥ 1.5 cannot be told',
          }[era]
        }`;
  return { era, because, missing, ...families };
}
