// Every PromQL the console generates parses with Prometheus's grammar, for every signal key, and each signal
// that cannot come from Prometheus says why instead of producing a query.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsesAsPromQL, promqlProblems } from '@shared/signals/promql-check';
import { promqlKeys, signalPromql, windowSeconds } from '@shared/signals/promql';
import { GPU_SIGNALS, ROUTER_SIGNALS, SERVER_SIGNALS } from '@shared/signals/spec';

const WORKER = { selector: 'job="sglang-decode",instance="127.0.0.1:30200"' };

describe('signal PromQL', () => {
  it('gives every metric signal a query that parses, under a worker, a role and an empty selector', () => {
    const scopes = [WORKER, { selector: 'job=~"$job",instance=~"$instance"' }, { selector: '' }];
    let queries = 0;
    for (const key of promqlKeys())
      for (const scope of scopes) {
        const q = signalPromql(key, scope);
        if (!q.ok) continue;
        queries++;
        expect(promqlProblems(q.expr), `${key}: ${q.expr}`).toEqual([]);
        if (scope.selector) expect(q.expr).toContain(scope.selector);
      }
    expect(queries).toBeGreaterThan(150);
  });

  it('covers every spec signal with metrics, and names the reason for the rest', () => {
    const tables = { prefill: SERVER_SIGNALS, router: ROUTER_SIGNALS } as const;
    for (const [role, table] of Object.entries(tables))
      for (const [name, spec] of Object.entries(table)) {
        const q = signalPromql(`${role}.${name}`, WORKER);
        if (spec.kind === 'state' || spec.kind === 'forecast') {
          expect(q.ok, name).toBe(false);
          if (!q.ok) expect(q.why).toContain(spec.label);
        } else expect(q.ok, `${role}.${name}: ${q.ok ? '' : q.why}`).toBe(true);
      }
    for (const field of Object.keys(GPU_SIGNALS))
      expect(signalPromql(`gpu.1.${field}`, WORKER).ok).toBe(true);
    expect(signalPromql('prefill.cache_hit_rate', WORKER).ok).toBe(true);
    expect(signalPromql('decode.cache_hit_rate', WORKER)).toMatchObject({ ok: false });
    expect(signalPromql('decode.nope', WORKER)).toMatchObject({
      ok: false,
      why: expect.stringContaining('decode.nope'),
    });
  });

  it('reads the older family name only as the fallback of the newer one', () => {
    const q = signalPromql('decode.itl_p99_s', WORKER);
    if (!q.ok) throw new Error(q.why);
    const itl = q.expr.indexOf('sglang:inter_token_latency_seconds_bucket');
    const tpot = q.expr.indexOf('sglang:time_per_output_token_seconds_bucket');
    expect(itl).toBeGreaterThan(-1);
    expect(tpot).toBeGreaterThan(itl);
    expect(q.expr.slice(itl, tpot)).toContain(' or ');
    expect(q.expr).toContain('histogram_quantile(0.99, sum by (le) (rate(');
  });

  it('collapses replicas within a dp rank with max and combines ranks by the spec', () => {
    const q = signalPromql('decode.running', WORKER);
    expect(q).toMatchObject({ ok: true });
    if (q.ok) {
      expect(q.expr).toMatch(
        /^sum\(\(max by \(instance, dp_rank\) \(sglang:num_running_reqs\{[^}]*priority=""\}\) or max by/,
      );
      expect(q.windowS).toBeUndefined();
    }
    const speed = signalPromql('decode.kv_transfer_speed_gb_s', WORKER);
    if (speed.ok) expect(speed.expr).toMatch(/^\(min\(.*_sum.*_count/);
  });

  it('uses the live 60 s window, widened to 4 scrape intervals for a slow Prometheus', () => {
    expect(windowSeconds(15)).toBe(60);
    expect(windowSeconds(30)).toBe(120);
    const q = signalPromql('decode.generation_tokens_per_s', { ...WORKER, scrapeIntervalS: 60 });
    expect(q).toMatchObject({ ok: true, windowS: 240 });
    if (q.ok) expect(q.expr).toContain('[240s]');
  });

  it('passes Prometheus 2.42’s own type checks (promtool check rules)', () => {
    const rules = promqlKeys().flatMap((key) => {
      const q = signalPromql(key, WORKER);
      return q.ok
        ? [
            `      - record: pd:${key.replace(/[^A-Za-z0-9_]/g, '_')}\n        expr: ${JSON.stringify(q.expr)}`,
          ]
        : [];
    });
    const file = join(mkdtempSync(join(tmpdir(), 'promql-')), 'rules.yml');
    writeFileSync(file, `groups:\n  - name: pd\n    rules:\n${rules.join('\n')}\n`);
    // Throws with promtool's words (rule, expression, cause) when one does not type-check.
    const out = execFileSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
    expect(out).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it('reports where a broken expression fails', () => {
    expect(parsesAsPromQL('sum(rate(x[60s]))')).toBe(true);
    expect(parsesAsPromQL('sum(rate(x[60s])')).toBe(false);
    expect(promqlProblems('sum(rate(x[60s])')[0]).toContain('ends too early');
    expect(promqlProblems('a or b)')[0]).toContain('column 7');
  });
});
