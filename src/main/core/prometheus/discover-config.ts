// The scrape targets a Prometheus config file lists, for when the Prometheus itself cannot be asked (it wants
// credentials the console does not have, or it is down): read over SSH from the path its ExecStart names.
// Only static_configs name their targets in the file; service discovery (file_sd, consul, kubernetes…) is
// resolved at run time and is reported as such, not guessed.
import yaml from 'js-yaml';
import { z } from 'zod';
import { parsePromDurationS } from './http-client';
import type { PromTarget } from './prom-api';

const scrapeConfig = z
  .object({
    job_name: z.string(),
    scrape_interval: z.string().optional(),
    metrics_path: z.string().optional(),
    scheme: z.string().optional(),
    static_configs: z
      .array(
        z.object({
          targets: z.array(z.string()).default([]),
          labels: z.record(z.string(), z.string()).optional(),
        }),
      )
      .optional(),
  })
  .passthrough();

const configFile = z
  .object({
    global: z.object({ scrape_interval: z.string().optional() }).passthrough().optional(),
    scrape_configs: z.array(scrapeConfig).optional(),
  })
  .passthrough();

export interface ConfigTargets {
  targets: PromTarget[];
  /** Jobs whose targets the file does not list (service discovery), by name. */
  dynamicJobs: string[];
}

/** Targets of a prometheus.yml (health unknown: nobody scraped them for us). Throws on a file that is not one. */
export function targetsFromConfigYaml(text: string, file: string): ConfigTargets {
  let doc: unknown;
  try {
    doc = yaml.load(text);
  } catch (e) {
    throw new Error(`${file} is not YAML: ${(e as Error).message.split('\n')[0]}`, { cause: e });
  }
  const parsed = configFile.safeParse(doc ?? {});
  if (!parsed.success)
    throw new Error(`${file} is not a Prometheus configuration: ${parsed.error.issues[0]?.message}`);
  const globalInterval = parsed.data.global?.scrape_interval ?? '1m';
  const targets: PromTarget[] = [];
  const dynamicJobs: string[] = [];
  for (const job of parsed.data.scrape_configs ?? []) {
    const sdKeys = Object.keys(job).filter((k) => k.endsWith('_sd_configs'));
    if (sdKeys.length) dynamicJobs.push(job.job_name);
    const scheme = job.scheme ?? 'http';
    const path = job.metrics_path ?? '/metrics';
    for (const sc of job.static_configs ?? []) {
      for (const address of sc.targets) {
        const labels = { job: job.job_name, instance: address, ...sc.labels };
        targets.push({
          job: job.job_name,
          instance: labels.instance,
          scrapeUrl: `${scheme}://${address}${path}`,
          health: 'unknown',
          lastError: '',
          lastScrape: '',
          scrapeIntervalS: parsePromDurationS(job.scrape_interval ?? globalInterval),
          labels,
        });
      }
    }
  }
  return { targets, dynamicJobs };
}
