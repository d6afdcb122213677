// `pd-console export prometheus-config|grafana-dashboard --host demo`: the files the panel's buttons save,
// from a terminal — a config promtool accepts with a job per role, and a dashboard whose queries parse.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { cliCaptured } from '../cli/run-on-app';
import { promqlProblems } from '../../src/shared/signals/promql-check';
import { prometheusUnavailableReason, promtool } from '../support/prometheus-server';

describe('pd-console export', () => {
  it('prometheus-config --out FILE writes a config promtool accepts, and refuses to overwrite it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pd-export-'));
    try {
      const file = path.join(dir, 'prometheus.yml');
      const r = await cliCaptured(['export', 'prometheus-config', '--host', 'demo', '--out', file]);
      // The file describes the simulated host, which is said beside it (stderr), not in it.
      expect(r.err).toMatch(
        /^pd-console export: from demo GPU host \(simulated\), not a real deployment\nwrote .*prometheus\.yml \(\d+ bytes\)\nWhere to run it: on demo, where every target is \(each is scraped on 127\.0\.0\.1\)\.\n/,
      );
      // How to install it, naming the file as written.
      expect(r.err).toContain('  promtool check config prometheus.yml\n');
      expect(await readFile(file, 'utf8')).toContain('#   promtool check config prometheus.yml\n');
      expect(r.code).toBe(0);
      const doc = yaml.load(await readFile(file, 'utf8')) as {
        scrape_configs: Array<{
          job_name: string;
          static_configs: Array<{ targets: string[]; labels: Record<string, string> }>;
        }>;
      };
      expect(
        doc.scrape_configs.map((j) => [
          j.job_name,
          j.static_configs[0]!.targets[0],
          j.static_configs[0]!.labels.worker,
        ]),
      ).toEqual([
        // The worker label is the service's id, the scope of its keys in the console (decode.kv_ratio@decode-0).
        ['sglang-prefill', '127.0.0.1:30100', 'prefill-0'],
        ['sglang-decode', '127.0.0.1:30200', 'decode-0'],
        ['sglang-router', '127.0.0.1:29001', 'router'],
      ]);
      if (!prometheusUnavailableReason()) {
        const check = await promtool(['check', 'config', file]);
        expect(check.code, check.stdout + check.stderr).toBe(0);
      }
      const again = await cliCaptured(['export', 'prometheus-config', '--host', 'demo', '--out', file]);
      expect(again.code).toBe(1);
      expect(again.err).toContain('it exists');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('grafana-dashboard prints a dashboard whose every query parses', async () => {
    const r = await cliCaptured(['export', 'grafana-dashboard', '--host', 'demo']);
    expect(r.code).toBe(0);
    const d = JSON.parse(r.out) as { panels: Array<{ type: string; targets?: Array<{ expr: string }> }> };
    const exprs = d.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
    expect(exprs.length).toBeGreaterThan(25);
    for (const e of exprs) expect(promqlProblems(e)).toEqual([]);
  }, 60_000);

  it('bad usage exits 2 and says what is wrong', async () => {
    const r = await cliCaptured(['export', 'alertmanager-config']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown export "alertmanager-config"');
  });
});
