// The Grafana export: a dashboard of the foundation SDK's Dashboard type, templated by job and instance per
// role, whose every query is the signal specification's PromQL and parses with Prometheus's own grammar.
import { describe, expect, it } from 'vitest';
import type { Dashboard, Panel, VariableModel } from '@grafana/grafana-foundation-sdk/dashboard';
import {
  dashboardQueries,
  grafanaDashboardJson,
  DASHBOARD_ROWS,
} from '../../src/main/core/prometheus/export-dashboard';
import { promqlProblems } from '../../src/shared/signals/promql-check';
import { signalPromql } from '../../src/shared/signals/promql';

describe('grafanaDashboardJson', () => {
  const d: Dashboard = grafanaDashboardJson({ title: 'Demo PD deployment (PD Console)' });
  const panels = (d.panels ?? []).filter((p): p is Panel => p.type === 'timeseries');

  it('has a panel per console chart with one Prometheus query per signal', () => {
    expect(d.title).toBe('Demo PD deployment (PD Console)');
    const expected = DASHBOARD_ROWS.flatMap((r) => r.panels.map((p) => p.title));
    expect(panels.map((p) => p.title)).toEqual(expected);
    for (const p of panels) {
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets ?? []) expect((t as { expr?: string }).expr, p.title).toBeTruthy();
    }
    const kv = panels.find((p) => p.title === 'KV cache usage')!;
    expect(kv.fieldConfig?.defaults?.unit).toBe('percentunit');
  });

  it('is templated by job and instance of each role', () => {
    const vars = (d.templating?.list ?? []) as VariableModel[];
    expect(vars.map((v) => v.name)).toEqual([
      'datasource',
      'prefill_job',
      'prefill_instance',
      'decode_job',
      'decode_instance',
      'router_job',
      'router_instance',
    ]);
    const exprs = dashboardQueries().filter((q) => q.key.startsWith('decode.'));
    for (const q of exprs) {
      expect(q.expr).toContain('job="$decode_job"');
      expect(q.expr).toContain('instance=~"$decode_instance"');
    }
  });

  it('every query parses as PromQL and is the specification’s', () => {
    const qs = dashboardQueries();
    expect(qs.length).toBeGreaterThan(25);
    for (const q of qs) {
      expect(promqlProblems(q.expr), `${q.panel} / ${q.key}`).toEqual([]);
      const role = q.key.split('.')[0]!;
      const spec = signalPromql(q.key, { selector: `job="$${role}_job",instance=~"$${role}_instance"` });
      expect(spec.ok && spec.expr).toBe(q.expr);
    }
  });

  it('the parse check can fail', () => {
    expect(promqlProblems('sum(rate(x[1m])')).not.toEqual([]);
  });
});
