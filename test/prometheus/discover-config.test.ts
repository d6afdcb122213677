// Reading the targets a prometheus.yml lists (for when the Prometheus itself cannot be asked): static targets
// with their job, labels, path and interval; jobs found by service discovery are named, not guessed.
import { describe, expect, it } from 'vitest';
import { targetsFromConfigYaml } from '../../src/main/core/prometheus/discover-config';

describe('targetsFromConfigYaml', () => {
  it('lists static targets with job, instance label, URL and interval', () => {
    const r = targetsFromConfigYaml(
      [
        'global: { scrape_interval: 30s }',
        'scrape_configs:',
        '  - job_name: sglang',
        '    metrics_path: /metrics/',
        '    static_configs:',
        "      - targets: ['127.0.0.1:30200', '10.1.0.14:30100']",
        '  - job_name: router',
        '    scrape_interval: 5s',
        '    static_configs:',
        "      - targets: ['127.0.0.1:29001']",
        '        labels: { instance: gpu-a:29001 }',
        '  - job_name: k8s',
        '    kubernetes_sd_configs: [{ role: pod }]',
        '',
      ].join('\n'),
      '/etc/prometheus/prometheus.yml',
    );
    expect(r.targets.map((t) => [t.job, t.instance, t.scrapeUrl, t.scrapeIntervalS, t.health])).toEqual([
      ['sglang', '127.0.0.1:30200', 'http://127.0.0.1:30200/metrics/', 30, 'unknown'],
      ['sglang', '10.1.0.14:30100', 'http://10.1.0.14:30100/metrics/', 30, 'unknown'],
      ['router', 'gpu-a:29001', 'http://127.0.0.1:29001/metrics', 5, 'unknown'],
    ]);
    expect(r.dynamicJobs).toEqual(['k8s']);
  });

  it('names the file when it is not a Prometheus configuration', () => {
    expect(() => targetsFromConfigYaml('scrape_configs: [ {', '/etc/p.yml')).toThrow(
      /\/etc\/p\.yml is not YAML/,
    );
    expect(() => targetsFromConfigYaml('scrape_configs: 3', '/etc/p.yml')).toThrow(
      /\/etc\/p\.yml is not a Prometheus configuration/,
    );
  });
});
