// One key's history from Prometheus: the signal's PromQL (the same specification as the live evaluator) under
// the worker's label matchers, asked over the range's grid, the answer turned into a chart part, or into a
// problem worded for the chart (which query, what failed, what to change).
import type { HistoryPart, HistoryProblem } from '@shared/api/history';
import type { Role } from '@shared/domain';
import { promqlFamilies, signalPromql } from '@shared/signals/promql';
import { splitScopedKey } from '@shared/signals/scoped-key';
import type { PromFailure } from './prom-api';
import type { PromHistoryTarget } from './history-target';
import { rangeGrid } from './history-step';

export interface PromPartResult {
  part?: HistoryPart;
  problem?: HistoryProblem;
  bytes: number;
}

/** A failure as the client words it (PromRequestError.failure), else the error's own words. */
function failureOf(err: unknown): PromFailure {
  const f = (err as { failure?: PromFailure } | null)?.failure;
  if (f && typeof f.code === 'string' && typeof f.message === 'string') return f;
  const e = err as Error;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError')
    return {
      code: 'timeout',
      message: 'Prometheus did not answer in time',
      fix: 'zoom into a shorter range or raise the timeout',
    };
  return { code: 'unreachable', message: e?.message ?? String(err) };
}

/** The selector of a key's series, or why there is none. */
function selectorOf(target: PromHistoryTarget, key: string): { selector: string; base: string } | string {
  const { key: base, scope } = splitScopedKey(key);
  const role = base.split('.')[0];
  if (role === 'gpu') {
    const s = target.gpuSelector?.(scope) ?? null;
    return s === null
      ? `no DCGM exporter of ${scope ?? 'this host'} is scraped by ${target.api.label}`
      : { selector: s, base };
  }
  const s = target.selector(role as Role, scope);
  return s === null
    ? `${scope ?? `the ${role} workers`} ${scope ? 'is' : 'are'} not scraped by ${target.api.label}`
    : { selector: s, base };
}

export async function promPart(
  target: PromHistoryTarget,
  key: string,
  fromMs: number,
  toMs: number,
  points: number,
  signal?: AbortSignal,
): Promise<PromPartResult> {
  const label = target.api.label;
  const sel = selectorOf(target, key);
  if (typeof sel === 'string')
    return {
      bytes: 0,
      problem: {
        source: 'prometheus',
        code: 'not-scraped',
        message: sel,
        fix: 'add the scrape_config that `pd-console export prometheus-config` writes, then reload Prometheus',
      },
    };
  const scope = { selector: sel.selector, scrapeIntervalS: target.scrapeIntervalS };
  let q = signalPromql(sel.base, scope);
  if (!q.ok) return { bytes: 0, problem: { source: 'prometheus', code: 'no-promql', message: q.why } };
  const grid = rangeGrid(fromMs, toMs, points, target.scrapeIntervalS);
  if (!grid) return { bytes: 0 };
  let probeBytes = 0;
  try {
    // Which of the expression's families Prometheus holds at the range's two ends (an index lookup each):
    // the eras it does not hold are left out of the query, which Prometheus would otherwise evaluate at every step.
    const families = promqlFamilies(q.expr);
    if (families.length > 1) {
      const names = families.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
      const probe = `group by (__name__) ({__name__=~"${names}"${sel.selector ? `,${sel.selector}` : ''}})`;
      const seen = new Set<string>();
      for (const t of [grid.startS, grid.endS]) {
        const r = await target.api.query(probe, t, signal);
        probeBytes += r.bytes;
        for (const s of r.series) if (s.metric.__name__) seen.add(s.metric.__name__);
      }
      const pruned = signalPromql(sel.base, { ...scope, present: (name) => seen.has(name) });
      if (pruned.ok) q = pruned;
    }
  } catch {
    // The probe is an optimisation: the full query below says what is wrong, in its own words.
  }
  if (!q.ok) return { bytes: probeBytes };
  try {
    const r = await target.api.queryRange(q.expr, grid.startS, grid.endS, grid.stepS, signal);
    // The expression aggregates to one label-less series; a scalar-less answer is "no data there".
    const values = r.series[0]?.values ?? [];
    if (values.length === 0)
      return {
        bytes: r.bytes + probeBytes,
        problem: {
          source: 'prometheus',
          code: 'missing',
          message: `${label} has no data for ${key} between ${iso(grid.startS)} and ${iso(grid.endS)}`,
          fix: 'check that Prometheus scraped this worker then (its retention, the job/instance labels) — the query is below',
          query: q.expr,
        },
      };
    const pts: [number, number | null][] = [];
    // Points on the grid with no value are gaps: Prometheus leaves them out, the chart must not bridge them.
    let prev = -Infinity;
    for (const [t, v] of values) {
      const ms = t * 1000;
      if (ms - prev > grid.stepS * 1000 * 1.5 && pts.length > 0) pts.push([prev + grid.stepS * 1000, null]);
      pts.push([ms, Number.isFinite(v) ? v : null]);
      prev = ms;
    }
    return {
      bytes: r.bytes + probeBytes,
      part: { source: 'prometheus', label, points: pts, query: q.expr, stepS: grid.stepS },
      ...(r.warnings.length
        ? {
            problem: {
              source: 'prometheus' as const,
              code: 'partial',
              message: `${label} answered with warnings: ${r.warnings.join('; ')}`,
              query: q.expr,
            },
          }
        : {}),
    };
  } catch (err) {
    const f = failureOf(err);
    return {
      bytes: 0,
      problem: {
        source: 'prometheus',
        code: f.code,
        message: `${label} could not answer the history of ${key}: ${f.message}`,
        ...(f.fix ? { fix: f.fix } : {}),
        query: f.query ?? q.expr,
      },
    };
  }
}

const iso = (s: number): string => new Date(s * 1000).toISOString().replace('.000Z', 'Z');
