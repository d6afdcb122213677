// What the monitor reads besides the servers' own /metrics, recorded as ordinary series of two synthetic scrape
// targets, the way Prometheus records `up` and `scrape_duration_seconds` next to what it scraped: the file format
// needs no new record kind, every reader and export sees them as series, and the value codec stores them exactly.
//   target "gpu":     one row per nvidia-smi reading, one series per GPU and field (label gpu="<index>")
//   target "monitor": one row per poll, per service (label role="<role>"): whether its scrape answered, how long
//                     it took, how many samples it served, and the KV capacity read from /server_info; in a
//                     fleet also worker="<id>", the time of the host poll the merged observation carries
//                     for each worker (its scrape's row), and the GPUs are one target per host ("gpu@<host>")
import type { GpuReading } from '@shared/contract';
import type { Observation } from '@shared/domain';
import type { Exposition, MetricFamily } from '../probes/exposition/types';
import { SERVER_INFO_CAPACITY } from '../probes/sglang/kv';

export const GPU_TARGET = 'gpu';
export const MONITOR_TARGET = 'monitor';

const MIB = 1024 * 1024;

/** Per field of the live store's GPU keys (`gpu.<index>.<field>`): the recorded family and how to read it. */
export const GPU_FIELDS = {
  util: {
    family: 'pdc_gpu_utilization_percent',
    help: 'nvidia-smi utilization.gpu',
    read: (g: GpuReading) => g.utilPct,
  },
  mem_used: {
    family: 'pdc_gpu_memory_used_bytes',
    help: 'nvidia-smi memory.used',
    read: (g: GpuReading) => (g.memUsedMiB === null ? null : g.memUsedMiB * MIB),
  },
  mem_total: {
    family: 'pdc_gpu_memory_total_bytes',
    help: 'nvidia-smi memory.total',
    read: (g: GpuReading) => (g.memTotalMiB === null ? null : g.memTotalMiB * MIB),
  },
  temp: {
    family: 'pdc_gpu_temperature_celsius',
    help: 'nvidia-smi temperature.gpu',
    read: (g: GpuReading) => g.tempC,
  },
  power: {
    family: 'pdc_gpu_power_watts',
    help: 'nvidia-smi power.draw',
    read: (g: GpuReading) => g.powerW,
  },
} as const;

export type GpuField = keyof typeof GPU_FIELDS;

export const MONITOR_FAMILIES = {
  up: 'up',
  duration: 'scrape_duration_seconds',
  samples: 'scrape_samples_scraped',
  capacity: 'pdc_server_info_max_total_num_tokens',
  polledAt: 'pdc_polled_at_ms',
} as const;

function gauge(name: string, help: string, samples: MetricFamily['samples']): MetricFamily {
  return { name, type: 'gauge', help, samples };
}

function exposition(families: MetricFamily[]): Exposition {
  const kept = families.filter((f) => f.samples.length > 0);
  return {
    format: 'prometheus',
    families: kept,
    sampleCount: kept.reduce((n, f) => n + f.samples.length, 0),
  };
}

/** One nvidia-smi reading as a scrape of the "gpu" target; a field nvidia-smi could not give is NaN (a gap). */
export function gpuExposition(gpus: readonly GpuReading[]): Exposition {
  const sorted = [...gpus].sort((a, b) => a.index - b.index);
  return exposition(
    Object.values(GPU_FIELDS).map((f) =>
      gauge(
        f.family,
        f.help,
        sorted.map((g) => ({ name: f.family, labels: { gpu: String(g.index) }, value: f.read(g) ?? NaN })),
      ),
    ),
  );
}

/** One poll's scrape health and /server_info capacity of every service, as a scrape of the "monitor" target. */
export function monitorExposition(o: Observation): Exposition {
  const up: MetricFamily['samples'] = [];
  const duration: MetricFamily['samples'] = [];
  const samples: MetricFamily['samples'] = [];
  const capacity: MetricFamily['samples'] = [];
  const polledAt: MetricFamily['samples'] = [];
  for (const s of o.services) {
    // A fleet's worker adds its id: several services share a role there (format 1.4).
    const labels: Record<string, string> =
      s.id === undefined ? { role: s.role } : { role: s.role, worker: s.id };
    const m = s.metrics;
    up.push({ name: MONITOR_FAMILIES.up, labels, value: m?.ok ? 1 : 0 });
    if (m?.ok) {
      duration.push({ name: MONITOR_FAMILIES.duration, labels, value: m.durationMs / 1000 });
      samples.push({ name: MONITOR_FAMILIES.samples, labels, value: m.samples });
    }
    // A fleet's hosts poll on their own: the merged observation carries each host's newest finished poll, whose
    // scrape may be older than one the recording already holds (a poll in flight). Review reads a role's
    // quantiles from the scrape live read (fleet-data.ts).
    if (s.polledAt !== undefined)
      polledAt.push({ name: MONITOR_FAMILIES.polledAt, labels, value: s.polledAt });
    if (s.kv?.sourceMetrics.includes(SERVER_INFO_CAPACITY))
      capacity.push({ name: MONITOR_FAMILIES.capacity, labels, value: s.kv.capacityTokens });
  }
  return exposition([
    gauge(MONITOR_FAMILIES.up, 'whether the /metrics scrape answered this poll (1) or not (0)', up),
    gauge(MONITOR_FAMILIES.duration, 'time the /metrics scrape took', duration),
    gauge(MONITOR_FAMILIES.samples, 'samples the /metrics scrape served', samples),
    gauge(
      MONITOR_FAMILIES.capacity,
      'KV cache capacity in tokens read from /server_info (servers that do not export it)',
      capacity,
    ),
    gauge(
      MONITOR_FAMILIES.polledAt,
      'a fleet worker: epoch ms of the host poll this observation carries (its scrape has that time)',
      polledAt,
    ),
  ]);
}

/**
 * Whether `name` is a family of the host targets, which review reads (the reader decodes only what review asks
 * for); their names are PD Console's own, so the name alone tells.
 */
export function isHostFamily(name: string): boolean {
  return (
    Object.values(GPU_FIELDS).some((f) => f.family === name) ||
    Object.values(MONITOR_FAMILIES).some((f) => f === name)
  );
}
