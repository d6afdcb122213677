// A Grafana dashboard with the console's panels — KV cache, latency quantiles, throughput, queues, the router —
// each panel's PromQL taken from the signal specification (src/shared/signals/promql.ts, the same queries
// history uses), so Grafana and the console show one figure. Templated by job and instance per role: the
// jobs default to the generated prometheus.yml's (export-config.ts JOB_OF_ROLE) and can be changed in
// Grafana's variable bar for a Prometheus that names them otherwise. Built with Grafana's own foundation SDK
// rather than hand-written JSON, so the result has the schema Grafana imports.
import {
  DashboardBuilder,
  DatasourceVariableBuilder,
  CustomVariableBuilder,
  QueryVariableBuilder,
  RowBuilder,
  VariableRefresh,
  type Dashboard,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import type { Role } from '@shared/domain';
import type { Observation } from '@shared/domain';
import type { SignalUnit } from '@shared/api/dashboard';
import { signalPromql } from '@shared/signals/promql';
import { specsFor } from '@shared/signals/spec';
import { JOB_OF_ROLE } from './export-config';

/** The console's charts, in its order: a row each, the signals of each panel (one query per signal). */
export const DASHBOARD_ROWS: ReadonlyArray<{
  title: string;
  panels: ReadonlyArray<{ title: string; keys: readonly string[] }>;
}> = [
  {
    title: 'KV cache',
    panels: [
      { title: 'KV cache usage', keys: ['prefill.kv_ratio', 'decode.kv_ratio'] },
      { title: 'KV tokens (decode)', keys: ['decode.kv_used', 'decode.kv_evictable', 'decode.kv_capacity'] },
    ],
  },
  {
    title: 'Latency',
    panels: [
      {
        title: 'Time to first token',
        keys: ['prefill.ttft_p50_s', 'prefill.ttft_p90_s', 'prefill.ttft_p99_s'],
      },
      { title: 'Inter-token latency', keys: ['decode.itl_p50_s', 'decode.itl_p90_s', 'decode.itl_p99_s'] },
      { title: 'End-to-end latency', keys: ['decode.e2e_p50_s', 'decode.e2e_p99_s'] },
      {
        title: 'KV transfer latency',
        keys: ['decode.kv_transfer_latency_p50_ms', 'decode.kv_transfer_latency_p99_ms'],
      },
    ],
  },
  {
    title: 'Throughput',
    panels: [
      { title: 'Generation tokens/s', keys: ['decode.generation_tokens_per_s'] },
      { title: 'Prompt tokens/s', keys: ['prefill.prompt_tokens_per_s'] },
      { title: 'Requests/s', keys: ['prefill.requests_per_s', 'decode.requests_per_s'] },
    ],
  },
  {
    title: 'Queues',
    panels: [
      {
        title: 'Running and queued',
        keys: ['prefill.running', 'prefill.queued', 'decode.running', 'decode.queued'],
      },
      {
        title: 'PD queues',
        keys: [
          'prefill.prefill_bootstrap_queue',
          'prefill.prefill_inflight_queue',
          'decode.decode_prealloc_queue',
          'decode.decode_transfer_queue',
        ],
      },
    ],
  },
  {
    title: 'Router',
    panels: [
      { title: 'Router requests/s', keys: ['router.router_requests_per_s', 'router.router_errors_per_s'] },
      { title: 'Router error share', keys: ['router.router_error_share'] },
      { title: 'Router latency', keys: ['router.router_latency_p50_s', 'router.router_latency_p99_s'] },
      { title: 'Workers healthy', keys: ['router.workers_healthy', 'router.workers_total'] },
    ],
  },
];

const ROLES: readonly Role[] = ['prefill', 'decode', 'router'];

/** Grafana's unit ids (packages/grafana-data valueFormats) for the specification's units. */
const GRAFANA_UNIT: Record<SignalUnit, string> = {
  ratio: 'percentunit',
  tokens: 'short',
  requests: 'short',
  tokens_per_s: 'short',
  requests_per_s: 'reqps',
  per_min: 'short',
  seconds: 's',
  ms: 'ms',
  gb_per_s: 'decgbytes',
  mb: 'decmbytes',
  bytes: 'bytes',
  percent: 'percent',
} as Record<SignalUnit, string>;

const jobVar = (role: Role): string => `${role}_job`;
const instanceVar = (role: Role): string => `${role}_instance`;
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/** The matchers of a role's series: its job variable and the chosen instances. */
export function roleSelector(role: Role): string {
  return `job="$${jobVar(role)}",instance=~"$${instanceVar(role)}"`;
}

export interface DashboardInput {
  title: string;
  /** The deployment's latest observation (unused today beyond the title; the PromQL covers every era). */
  latest?: Observation;
  uid?: string;
}

/** Every query of the dashboard with the key it came from, for tests and the docs. */
export interface DashboardQuery {
  panel: string;
  key: string;
  expr: string;
}

export function dashboardQueries(): DashboardQuery[] {
  const out: DashboardQuery[] = [];
  for (const row of DASHBOARD_ROWS)
    for (const p of row.panels)
      for (const key of p.keys) {
        const role = key.split('.')[0] as Role;
        const q = signalPromql(key, { selector: roleSelector(role) });
        if (q.ok) out.push({ panel: p.title, key, expr: q.expr });
      }
  return out;
}

export function grafanaDashboardJson(input: DashboardInput): Dashboard {
  const b = new DashboardBuilder(input.title)
    .uid(input.uid ?? 'pd-console-sglang-pd')
    .tags(['pd-console', 'sglang', 'generated'])
    .refresh('30s')
    .time({ from: 'now-6h', to: 'now' })
    .timezone('browser')
    .withVariable(new DatasourceVariableBuilder('datasource').label('Prometheus').type('prometheus'));
  for (const role of ROLES) {
    b.withVariable(
      new CustomVariableBuilder(jobVar(role))
        .label(`${role} job`)
        .values(JOB_OF_ROLE[role])
        .current({ text: JOB_OF_ROLE[role], value: JOB_OF_ROLE[role] })
        .allowCustomValue(true),
    );
    b.withVariable(
      new QueryVariableBuilder(instanceVar(role))
        .label(`${role} instance`)
        .datasource(DATASOURCE)
        .query(`label_values(up{job="$${jobVar(role)}"}, instance)`)
        .definition(`label_values(up{job="$${jobVar(role)}"}, instance)`)
        .refresh(VariableRefresh.OnTimeRangeChanged)
        .multi(true)
        .includeAll(true)
        .allValue('.*')
        .current({ text: 'All', value: '$__all' }),
    );
  }
  let y = 0;
  for (const row of DASHBOARD_ROWS) {
    b.withRow(new RowBuilder(row.title).gridPos({ x: 0, y, w: 24, h: 1 }));
    y += 1;
    row.panels.forEach((p, i) => {
      const first = p.keys[0]!;
      const role = first.split('.')[0] as Role;
      const spec = specsFor(role)[first.slice(first.indexOf('.') + 1)];
      const panel = new PanelBuilder()
        .title(p.title)
        .datasource(DATASOURCE)
        .gridPos({ x: (i % 2) * 12, y: y + Math.floor(i / 2) * 8, w: 12, h: 8 });
      if (spec) panel.unit(GRAFANA_UNIT[spec.unit] ?? 'short');
      if (spec?.unit === 'ratio') panel.min(0).max(1);
      p.keys.forEach((key, n) => {
        const r = key.split('.')[0] as Role;
        const q = signalPromql(key, { selector: roleSelector(r) });
        if (!q.ok) return;
        const s = specsFor(r)[key.slice(key.indexOf('.') + 1)];
        panel.withTarget(
          new DataqueryBuilder()
            .datasource(DATASOURCE)
            .expr(q.expr)
            .range()
            .legendFormat(`${r} ${s?.label ?? key}`)
            .refId(String.fromCharCode(65 + n)),
        );
      });
      b.withPanel(panel);
    });
    y += Math.ceil(row.panels.length / 2) * 8;
  }
  return b.build();
}
