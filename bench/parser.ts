// Exposition parser benchmark: our parser (warm, cold, second scrape and uncached) against
// parse-prometheus-text-format, side by side in one run, on Prometheus' alltypes corpus and on a generated
// SGLang-style scrape. Prints µs per sample, the ratio and the CPU share of scraping 3 endpoints × 300
// samples at 1 Hz; then the same by target size (node_exporter- and SGLang-style scrapes of 300, 20,000 and
// 100,000 series, with the peak heap of one parse per mode and the heap a warm cache keeps); then the
// parser's peak memory against its input size on typical and adversarial inputs, each in a child process of
// its own (peak RSS is per process). Run alone with `npx tsx bench/parser.ts` (`--memory`: only the memory
// part; `--sizes`: only the table by size).

import { spawnSync } from 'node:child_process';
import v8 from 'node:v8';
import vm from 'node:vm';

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseExposition, SeriesCache } from '../src/main/core/probes/exposition/parser';
import type { ExpositionFormat } from '../src/main/core/probes/exposition/types';

type ParseFn = (text: string) => number;

const REPO_ROOT = resolve(fileURLToPath(import.meta.url), '../..');
const ALLTYPES = resolve(REPO_ROOT, '../shared/conformance/prometheus-text/alltypes.237mfs.prom.txt');

/** The competitor: CommonJS, untyped, returns prom2json-shaped families. */
function loadCompetitor(): (text: string) => unknown {
  const require = createRequire(import.meta.url);
  const loaded: unknown = require('parse-prometheus-text-format');
  if (typeof loaded !== 'function') throw new Error('parse-prometheus-text-format did not export a function');
  return loaded as (text: string) => unknown;
}

// ---------------------------------------------------------------------------------------------------------
// A realistic SGLang scrape (prometheus_client multiprocess output of a PD prefill server, recent layout)

/** prometheus_client's floatToGoString: Go-style exponents for large values (8128902 → "8.128902e+06"). */
function goFloat(d: number): string {
  if (d === Infinity) return '+Inf';
  if (d === -Infinity) return '-Inf';
  if (Number.isNaN(d)) return 'NaN';
  let s = String(d);
  if (Number.isInteger(d) && !s.includes('e')) s += '.0';
  const dot = s.indexOf('.');
  if (d > 0 && dot > 6) {
    const mantissa = `${s[0]}.${s.slice(1, dot)}${s.slice(dot + 1)}`.replace(/[0.]+$/, '');
    return `${mantissa}e+0${dot - 1}`;
  }
  return s;
}

function range(from: number, to: number, step: number): number[] {
  const out: number[] = [];
  for (let v = from; v <= to + 1e-9; v += step) out.push(Math.round(v * 1000) / 1000);
  return out;
}

/** Bucket bounds as documented in reference/sglang-metrics.md. */
const BUCKETS = {
  ttft: [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400],
  itl: [
    0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6,
    0.8, 1, 2, 4, 6, 8,
  ],
  e2e: [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400],
  queue: [
    0,
    0.1,
    0.2,
    0.5,
    1,
    2,
    3,
    4,
    5,
    10,
    15,
    20,
    ...range(30, 100, 10),
    ...range(200, 1000, 100),
    ...range(1200, 2000, 200),
    2500,
    3000,
  ],
  perStage: Array.from({ length: 30 }, (_, i) => 0.001 * 1.62 ** i),
  kvLatencyMs: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000],
  kvSpeedGbS: [0.1, 0.5, 1, 5, 10, 25, 50, 100, 200, 400],
};

function labelText(labels: Record<string, string>): string {
  // multiprocess mode sorts label names
  const names = Object.keys(labels).sort();
  return `{${names.map((n) => `${n}="${labels[n]}"`).join(',')}}`;
}

/**
 * One scrape of a PD prefill server, as Prometheus text 0.0.4 or OpenMetrics 1.0. ~300 samples with one
 * scheduler; `ranks` > 1 repeats every scheduler series per tp_rank (a wide TP/DP server, ~240 series each).
 */
export function sglangScrape(format: ExpositionFormat, ranks = 1): string {
  const om = format === 'openmetrics';
  const model = 'Qwen/Qwen3-32B';
  const schedulers = Array.from({ length: ranks }, (_, rank) => ({
    engine_type: 'prefill',
    model_name: model,
    moe_ep_rank: '0',
    pp_rank: '0',
    tp_rank: String(rank),
  }));
  const scheduler = schedulers[0];
  const tokenizer = { engine_type: 'prefill', model_name: model };
  const lines: string[] = [];
  let seed = 42;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const gauge = (
    name: string,
    help: string,
    value: number,
    labels: Record<string, string>[] = schedulers,
  ): void => {
    lines.push(`# HELP sglang:${name} ${help}`, `# TYPE sglang:${name} gauge`);
    for (const l of labels) lines.push(`sglang:${name}${labelText(l)} ${goFloat(value)}`);
  };
  const counter = (
    name: string,
    help: string,
    value: number,
    labels: Record<string, string> = tokenizer,
  ): void => {
    const family = om ? name : `${name}_total`;
    lines.push(`# HELP sglang:${family} ${help}`, `# TYPE sglang:${family} counter`);
    lines.push(`sglang:${name}_total${labelText(labels)} ${goFloat(value)}`);
  };
  const histogram = (
    name: string,
    help: string,
    bounds: number[],
    groups: Record<string, string>[],
  ): void => {
    lines.push(`# HELP sglang:${name} ${help}`, `# TYPE sglang:${name} histogram`);
    for (const labels of groups) {
      const total = Math.round(1000 + random() * 1e7);
      let sum = 0;
      const bucketLines: string[] = [];
      let cumulative = 0;
      for (let i = 0; i < bounds.length; i++) {
        cumulative += Math.round(((total - cumulative) * random()) / 3);
        sum += cumulative * bounds[i] * 0.01;
        bucketLines.push(
          `sglang:${name}_bucket${labelText({ ...labels, le: goFloat(bounds[i]) })} ${goFloat(cumulative)}`,
        );
      }
      bucketLines.push(`sglang:${name}_bucket${labelText({ ...labels, le: '+Inf' })} ${goFloat(total)}`);
      // multiprocess mode writes _sum before the buckets
      lines.push(`sglang:${name}_sum${labelText(labels)} ${goFloat(Math.round(sum * 10) / 10)}`);
      lines.push(...bucketLines);
      lines.push(`sglang:${name}_count${labelText(labels)} ${goFloat(total)}`);
    }
  };

  gauge('num_running_reqs', 'The number of running requests.', 3);
  gauge('num_queue_reqs', 'The number of requests in the waiting queue.', 2);
  gauge('num_grammar_queue_reqs', 'The number of requests in the grammar waiting queue.', 0);
  gauge('num_used_tokens', 'The number of used tokens.', 18432);
  gauge('token_usage', 'The token usage.', 0.04);
  gauge('full_token_usage', 'The token usage for full attention layers.', 0.0412);
  gauge('swa_token_usage', 'The token usage for SWA layers.', 0);
  gauge('kv_used_tokens', 'Number of actively used token slots in the KV cache pool.', 18432);
  gauge(
    'kv_evictable_tokens',
    'Number of evictable (radix-cached) token slots in the KV cache pool.',
    201344,
  );
  gauge('kv_available_tokens', 'Number of free token slots in the KV cache pool.', 227640);
  gauge('max_total_num_tokens', 'Maximum total number of tokens in the KV cache pool.', 447416);
  gauge('gen_throughput', 'The generation throughput (token/s).', 0);
  gauge('cache_hit_rate', 'The prefix cache hit rate.', 0.63);
  gauge('utilization', 'The utilization.', 0.41);
  gauge('num_prefill_bootstrap_queue_reqs', 'The number of requests in the prefill bootstrap queue.', 1);
  gauge('num_prefill_inflight_queue_reqs', 'The number of requests in the prefill inflight queue.', 4);
  const withPid = schedulers.map((l, rank) => ({ ...l, pid: String(48211 + rank) }));
  gauge('num_retracted_reqs', 'The number of retracted requests.', 0, withPid);
  gauge('num_paused_reqs', 'The number of paused requests.', 0, withPid);
  gauge('engine_startup_time', 'The time taken for the engine to start up.', 187.4);
  gauge('engine_load_weights_time', 'The time taken for the engine to load weights.', 61.9);
  gauge('page_size', 'The page size.', 1);
  gauge('context_len', 'The context length.', 524288);
  gauge('new_token_ratio', 'The new token ratio.', 0.7);
  gauge('is_cuda_graph', 'Whether the batch is using CUDA graph.', 1);
  counter('prompt_tokens', 'Number of prefill tokens processed.', 8128902);
  counter('generation_tokens', 'Number of generation tokens processed.', 1533);
  counter('num_requests', 'Number of requests processed.', 1533);
  counter('num_aborted_requests', 'Number of requests aborted.', 4);
  counter('num_bootstrap_failed_reqs', 'The number of bootstrap failed requests.', 0, scheduler);
  counter('num_transfer_failed_reqs', 'The number of transfer failed requests.', 0, scheduler);
  histogram('time_to_first_token_seconds', 'Histogram of time to first token in seconds.', BUCKETS.ttft, [
    tokenizer,
  ]);
  histogram('inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', BUCKETS.itl, [
    tokenizer,
  ]);
  histogram(
    'e2e_request_latency_seconds',
    'Histogram of End-to-end request latency in seconds',
    BUCKETS.e2e,
    [tokenizer],
  );
  histogram('queue_time_seconds', 'Histogram of queueing time in seconds.', BUCKETS.queue, schedulers);
  histogram(
    'per_stage_req_latency_seconds',
    'The latency of each stage of requests.',
    BUCKETS.perStage,
    schedulers.flatMap((l) =>
      ['prefill_bootstrap', 'prefill_forward', 'prefill_transfer_kv_cache', 'request_process'].map(
        (stage) => ({ ...l, stage }),
      ),
    ),
  );
  histogram(
    'kv_transfer_latency_ms',
    'Histogram of KV cache transfer latency in ms.',
    BUCKETS.kvLatencyMs,
    schedulers,
  );
  histogram(
    'kv_transfer_speed_gb_s',
    'Histogram of KV cache transfer speed in GB/s.',
    BUCKETS.kvSpeedGbS,
    schedulers,
  );
  if (om) lines.push('# EOF');
  return lines.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------------------
// A node_exporter-style scrape of about `series` series: per-CPU, per-disk, per-interface and per-filesystem
// families as node_exporter 1.x writes them (sorted label names, Go float formatting), scaled by the number
// of CPUs, disks, interfaces and mounts.

export function nodeExporterScrape(format: ExpositionFormat, series: number): string {
  const om = format === 'openmetrics';
  const lines: string[] = [];
  let seed = 7;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const family = (
    name: string,
    type: 'counter' | 'gauge',
    help: string,
    labelSets: Record<string, string>[],
  ): void => {
    const declared = om && type === 'counter' ? name.replace(/_total$/, '') : name;
    lines.push(`# HELP ${declared} ${help}`, `# TYPE ${declared} ${type}`);
    for (const labels of labelSets) {
      const value = type === 'counter' ? Math.round(random() * 1e9) / 100 : Math.round(random() * 1e6);
      lines.push(`${name}${Object.keys(labels).length ? labelText(labels) : ''} ${goFloat(value)}`);
    }
  };
  // one unit: 1 CPU × 8 modes + 1 disk × 10 + 1 interface × 16 + 1 mount × 6 = 40 series
  const units = Math.max(1, Math.round((series - 12) / 40));
  const cpus = Array.from({ length: units }, (_, i) => String(i));
  const disks = cpus.map((i) => `nvme${Math.floor(Number(i) / 8)}n${Number(i) % 8}`);
  const devices = cpus.map((i) => `eth${i}`);
  const mounts = cpus.map((i) => ({
    device: `/dev/nvme${i}n1p1`,
    fstype: 'ext4',
    mountpoint: `/mnt/data${i}`,
  }));
  const modes = ['idle', 'iowait', 'irq', 'nice', 'softirq', 'steal', 'system', 'user'];
  family(
    'node_cpu_seconds_total',
    'counter',
    'Seconds the CPUs spent in each mode.',
    cpus.flatMap((cpu) => modes.map((mode) => ({ cpu, mode }))),
  );
  const diskFamilies = [
    'node_disk_read_bytes_total',
    'node_disk_written_bytes_total',
    'node_disk_reads_completed_total',
    'node_disk_writes_completed_total',
    'node_disk_read_time_seconds_total',
    'node_disk_write_time_seconds_total',
    'node_disk_io_time_seconds_total',
    'node_disk_io_time_weighted_seconds_total',
    'node_disk_reads_merged_total',
    'node_disk_writes_merged_total',
  ];
  for (const name of diskFamilies)
    family(
      name,
      'counter',
      `The total number of ${name.slice(10, -6)}.`,
      disks.map((device) => ({ device })),
    );
  const netFamilies = [
    'receive_bytes',
    'receive_packets',
    'receive_errs',
    'receive_drop',
    'receive_fifo',
    'receive_frame',
    'receive_compressed',
    'receive_multicast',
    'transmit_bytes',
    'transmit_packets',
    'transmit_errs',
    'transmit_drop',
    'transmit_fifo',
    'transmit_colls',
    'transmit_carrier',
    'transmit_compressed',
  ];
  for (const stat of netFamilies)
    family(
      `node_network_${stat}_total`,
      'counter',
      `Network device statistic ${stat}.`,
      devices.map((device) => ({ device })),
    );
  for (const stat of ['avail_bytes', 'free_bytes', 'size_bytes', 'files', 'files_free', 'readonly'])
    family(`node_filesystem_${stat}`, 'gauge', `Filesystem ${stat.replace('_', ' ')}.`, mounts);
  for (const name of ['load1', 'load5', 'load15', 'memory_MemTotal_bytes', 'memory_MemFree_bytes'])
    family(`node_${name}`, 'gauge', `${name}.`, [{}]);
  family('node_boot_time_seconds', 'gauge', 'Node boot time, in unixtime.', [{}]);
  family('node_context_switches_total', 'counter', 'Total number of context switches.', [{}]);
  family('node_forks_total', 'counter', 'Total number of forks.', [{}]);
  family('node_intr_total', 'counter', 'Total number of interrupts serviced.', [{}]);
  family('node_procs_running', 'gauge', 'Number of processes in runnable state.', [{}]);
  family('node_procs_blocked', 'gauge', 'Number of processes blocked waiting for I/O.', [{}]);
  family('node_uname_info', 'gauge', 'Labeled system information as provided by the uname system call.', [
    { machine: 'x86_64', nodename: 'gpu-node-17', release: '6.8.0-49-generic', sysname: 'Linux' },
  ]);
  if (om) lines.push('# EOF');
  return lines.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------------------
// Measurement

interface Contender {
  name: string;
  /** Returns a number derived from the result so the work cannot be optimised away. */
  parse: ParseFn;
  /** Runs before every parse, outside the timing (cold runs make a new series cache here). */
  before?: () => void;
  /** Told the input before any parse, for a `before` that needs it. */
  setText?: (text: string) => void;
  /**
   * Timed after the others, not interleaved with them: its runs leave much long-lived garbage (a new cache
   * filled every time), and process CPU time includes V8's GC threads, so the others would pay for it.
   */
  apart?: boolean;
}

interface Figure {
  name: string;
  usPerParse: number;
  usPerSample: number;
  error?: string;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

let sink = 0;

/** CPU time (user + system, µs) of `n` parses; `before` runs between them but is not counted. */
function cpuOf(c: Contender, text: string, n: number): number {
  let total = 0;
  for (let i = 0; i < n; i++) {
    c.before?.();
    const start = process.cpuUsage();
    sink += c.parse(text);
    const used = process.cpuUsage(start);
    total += used.user + used.system;
  }
  return total;
}

/**
 * Warms every contender up, then interleaves them round by round so that noise from other processes hits all
 * alike, and reports the median round. Time is CPU time of this process, not wall time: these machines are
 * shared, and CPU time is what the 1 Hz budget is about.
 */
function measure(
  text: string,
  samples: number,
  contenders: Contender[],
  { rounds, minWarmUp }: { rounds: number; minWarmUp: number },
): Figure[] {
  const usable: { c: Contender; msPerParse: number; times: number[] }[] = [];
  const figures = new Map<string, Figure>();
  for (const c of contenders) {
    try {
      c.setText?.(text);
      const started = performance.now();
      let warm = 0;
      while (performance.now() - started < 400 || warm < minWarmUp) {
        c.before?.();
        sink += c.parse(text);
        warm++;
      }
      usable.push({ c, msPerParse: (performance.now() - started) / warm, times: [] });
    } catch (err) {
      figures.set(c.name, { name: c.name, usPerParse: NaN, usPerSample: NaN, error: (err as Error).message });
    }
  }
  // One batch size for all: a contender timed one parse at a time would leave its garbage to be collected
  // on the next one's clock, while one timed in long batches pays for its own. At least 40 ms for the
  // fastest, at most ~2 s for the slowest.
  const ms = usable.map((u) => u.msPerParse);
  const perRound = Math.max(1, Math.min(Math.ceil(40 / Math.min(...ms)), Math.floor(2000 / Math.max(...ms))));
  for (let r = 0; r < rounds; r++) {
    // rotated every round, so that no contender always follows the same one
    for (let k = 0; k < usable.length; k++) {
      const u = usable[(r + k) % usable.length];
      u.times.push(cpuOf(u.c, text, perRound) / perRound);
    }
  }
  for (const u of usable) {
    const us = median(u.times);
    figures.set(u.c.name, { name: u.c.name, usPerParse: us, usPerSample: us / samples });
  }
  return contenders.map((c) => figures.get(c.name) as Figure);
}

/** measure(), with the contenders marked `apart` timed after the rest; figures in the contenders' order. */
function measureAll(
  text: string,
  samples: number,
  contenders: Contender[],
  opts: { rounds: number; minWarmUp: number },
): Figure[] {
  const together = measure(
    text,
    samples,
    contenders.filter((c) => c.apart !== true),
    opts,
  );
  const apart = measure(
    text,
    samples,
    contenders.filter((c) => c.apart === true),
    opts,
  );
  const byName = new Map([...together, ...apart].map((f) => [f.name, f]));
  return contenders.map((c) => byName.get(c.name) as Figure);
}

function fmt(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}

/** The ways our parser is timed; `before` builds the state of the parse outside the timing. */
function ourContenders(format: ExpositionFormat): Contender[] {
  // warm: the same target scraped again (the 1 Hz steady state); its cache is filled by the warm-up
  const warm = new SeriesCache();
  let fresh = new SeriesCache();
  let second = new SeriesCache();
  let text = '';
  return [
    { name: 'ours warm', parse: (t) => parseExposition(t, format, { cache: warm }).sampleCount },
    {
      name: 'ours cold',
      parse: (t) => parseExposition(t, format, { cache: fresh }).sampleCount,
      before: () => (fresh = new SeriesCache()),
    },
    {
      name: 'ours 2nd scrape',
      parse: (t) => parseExposition(t, format, { cache: second }).sampleCount,
      before: () => {
        second = new SeriesCache();
        parseExposition(text, format, { cache: second });
      },
      setText: (t) => (text = t),
      apart: true,
    },
    { name: 'ours uncached', parse: (t) => parseExposition(t, format).sampleCount },
  ];
}

function competitorContender(): Contender | undefined {
  let competitor: (text: string) => unknown;
  try {
    competitor = loadCompetitor();
  } catch (err) {
    console.log(`(parse-prometheus-text-format not compared: ${(err as Error).message.split('\n')[0]})`);
    return undefined;
  }
  return {
    name: 'parse-prometheus-text-format',
    parse: (text) => {
      const families = competitor(text);
      return Array.isArray(families) ? families.length : 0;
    },
  };
}

export async function runParserBench(): Promise<void> {
  const theirs = competitorContender();
  const inputs: { label: string; text: string; format: ExpositionFormat }[] = [];
  if (existsSync(ALLTYPES)) {
    inputs.push({
      label: 'alltypes.237mfs.prom.txt',
      text: readFileSync(ALLTYPES, 'utf8'),
      format: 'prometheus',
    });
  } else {
    console.log(
      `(skipping alltypes: ${ALLTYPES} not found; it lives in ../shared/conformance next to the repository)`,
    );
  }
  inputs.push({
    label: 'SGLang prefill scrape, text 0.0.4',
    text: sglangScrape('prometheus'),
    format: 'prometheus',
  });
  inputs.push({
    label: 'same scrape as OpenMetrics 1.0',
    text: sglangScrape('openmetrics'),
    format: 'openmetrics',
  });

  console.log(`Exposition parser benchmark — Node ${process.version}, ${process.platform}/${process.arch}`);
  console.log('CPU µs per parse (median of interleaved rounds); µs/sample = that ÷ samples in the input');
  console.log('ours warm: the same target scraped again, through its series cache (the 1 Hz steady state)');
  console.log('ours cold: first scrape of a target (a new cache: series are only noted as seen)');
  console.log('ours 2nd scrape: second scrape of a target (its series are stored); once per target');
  console.log('ours uncached: no cache (one-off parses: the CLI, tests)\n');
  const figures = new Map<string, Map<string, Figure>>();
  for (const input of inputs) {
    const samples = parseExposition(input.text, input.format).sampleCount;
    const contenders = ourContenders(input.format);
    // parse-prometheus-text-format has no OpenMetrics mode; it is compared on the text format only
    if (input.format === 'prometheus' && theirs !== undefined) contenders.push(theirs);
    const measured = measureAll(input.text, samples, contenders, { rounds: 15, minWarmUp: 50 });
    figures.set(input.label, new Map(measured.map((f) => [f.name, f])));
    console.log(`${input.label}: ${fmt(input.text.length / 1024, 1)} KiB, ${samples} samples`);
    for (const f of measured) {
      if (f.error !== undefined) {
        console.log(`  ${f.name.padEnd(30)} failed: ${f.error}`);
        continue;
      }
      const mibPerS = (input.text.length / 1024 / 1024 / f.usPerParse) * 1e6;
      console.log(
        `  ${f.name.padEnd(30)} ${fmt(f.usPerParse, 0).padStart(7)} µs/parse ${fmt(f.usPerSample, 3).padStart(8)} µs/sample ` +
          `${fmt(mibPerS, 0).padStart(5)} MiB/s`,
      );
    }
    const byName = figures.get(input.label) as Map<string, Figure>;
    const other = byName.get('parse-prometheus-text-format');
    const warm = byName.get('ours warm') as Figure;
    const uncached = byName.get('ours uncached') as Figure;
    if (other !== undefined && other.error === undefined) {
      console.log(
        `  parse-prometheus-text-format ÷ ours: ${fmt(other.usPerSample / warm.usPerSample, 1)}× warm, ` +
          `${fmt(other.usPerSample / uncached.usPerSample, 1)}× uncached`,
      );
    }
    console.log('');
  }
  // 3 endpoints × 300 samples, once a second: the steady load of a live session
  const sglang = figures.get('SGLang prefill scrape, text 0.0.4');
  if (sglang !== undefined) {
    const share = (f: Figure | undefined): string =>
      `${fmt((3 * 300 * (f?.usPerSample ?? NaN)) / 1e4, 3)} % of one core`;
    console.log(
      `CPU share of scraping 3 endpoints × 300 samples at 1 Hz: ${share(sglang.get('ours warm'))} steady, ` +
        `${share(sglang.get('ours cold'))} if every scrape were new series`,
    );
  }
  console.log('goals: ≥ 5× faster than parse-prometheus-text-format, ≤ 2 µs/sample');
  runSizeBench(theirs);
  if (sink === 0) console.log('');
  runMemoryBench();
}

// ---------------------------------------------------------------------------------------------------------
// Warm, cold and uncached by target size

const SIZES = [300, 20_000, 100_000];
type ScrapeKind = 'node_exporter' | 'sglang';

/** A Prometheus-text scrape of about `series` series of one kind. */
function scrapeOfSize(kind: ScrapeKind, series: number): string {
  // the SGLang scrape has ~78 series outside the schedulers and ~223 per scheduler rank
  return kind === 'node_exporter'
    ? nodeExporterScrape('prometheus', series)
    : sglangScrape('prometheus', Math.max(1, Math.round((series - 78) / 223)));
}

interface SizeMemory {
  /** Peak heap growth during one parse (largest heap before any GC in it, or at its end), bytes. */
  peak: Record<'warm' | 'cold' | 'uncached', number>;
  /** Heap the warm target's cache keeps between scrapes (after a full GC). */
  cacheRetained: number;
}

function runSizeBench(theirs: Contender | undefined): void {
  console.log(
    '\nBy target size (Prometheus text; CPU µs/sample, median of interleaved rounds; peak heap of one parse in ' +
      'a fresh process, from V8 GC statistics; cache = heap the warm cache keeps between scrapes)',
  );
  const rows: string[][] = [
    [
      'input',
      'series',
      'warm',
      'cold',
      '2nd',
      'uncached',
      'p-p-t-f',
      'warm/uncached',
      'peak heap warm / cold / uncached',
      'cache',
    ],
  ];
  let allWarmFaster = true;
  for (const size of SIZES) {
    for (const kind of ['node_exporter', 'sglang'] as const) {
      const text = scrapeOfSize(kind, size);
      const samples = parseExposition(text, 'prometheus').sampleCount;
      const contenders = ourContenders('prometheus');
      if (theirs !== undefined) contenders.push(theirs);
      const big = samples > 50_000;
      const figures = new Map(
        measureAll(text, samples, contenders, {
          rounds: big ? 5 : size > 1000 ? 7 : 15,
          minWarmUp: big ? 3 : size > 1000 ? 10 : 50,
        }).map((f) => [f.name, f]),
      );
      const us = (name: string): number => figures.get(name)?.usPerSample ?? NaN;
      const ratio = us('ours warm') / us('ours uncached');
      if (!(ratio <= 1)) allWarmFaster = false;
      const memory = sizeMemoryOf(kind, size);
      const mib = (n: number): string => fmt(n / MiB, 1);
      rows.push([
        `${kind} (${fmt(text.length / MiB, 2)} MiB)`,
        String(samples),
        fmt(us('ours warm'), 3),
        fmt(us('ours cold'), 3),
        fmt(us('ours 2nd scrape'), 3),
        fmt(us('ours uncached'), 3),
        fmt(us('parse-prometheus-text-format'), 3),
        `${fmt(ratio, 2)}${ratio <= 1 ? '' : ' SLOWER'}`,
        memory === undefined
          ? 'n/a'
          : `${mib(memory.peak.warm)} / ${mib(memory.peak.cold)} / ${mib(memory.peak.uncached)} MiB`,
        memory === undefined ? 'n/a' : `${mib(memory.cacheRetained)} MiB`,
      ]);
    }
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const r of rows) console.log('  ' + r.map((cell, c) => cell.padStart(widths[c])).join('  '));
  console.log(
    `goal: warm ≤ uncached at every size — ${allWarmFaster ? 'met' : 'NOT MET (see SLOWER above)'}`,
  );
}

/** Runs in a child with a GC at hand: peak heap of one parse of `kind`/`size` per mode, as JSON. */
function measureSizeMemory(kind: ScrapeKind, size: number): void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const text = scrapeOfSize(kind, size);
  parseExposition(sglangScrape('prometheus'), 'prometheus');
  const peakOf = (parse: () => unknown): number => {
    gc();
    gc();
    const before = process.memoryUsage().heapUsed;
    const profiler = new v8.GCProfiler();
    profiler.start();
    const result = parse();
    const atEnd = process.memoryUsage().heapUsed;
    const stats = profiler.stop();
    let peak = atEnd;
    for (const s of stats.statistics) peak = Math.max(peak, s.beforeGC.heapStatistics.usedHeapSize);
    sink += result === undefined ? 0 : 1;
    return peak - before;
  };
  const uncached = peakOf(() => parseExposition(text, 'prometheus'));
  const warmCache = new SeriesCache();
  for (let i = 0; i < 3; i++) parseExposition(text, 'prometheus', { cache: warmCache });
  const warm = peakOf(() => parseExposition(text, 'prometheus', { cache: warmCache }));
  gc();
  gc();
  const withCache = process.memoryUsage().heapUsed;
  warmCache.dispose();
  gc();
  gc();
  const cacheRetained = withCache - process.memoryUsage().heapUsed;
  const cold = peakOf(() => parseExposition(text, 'prometheus', { cache: new SeriesCache() }));
  const figure: SizeMemory = { peak: { warm, cold, uncached }, cacheRetained };
  process.stdout.write(JSON.stringify(figure));
}

function sizeMemoryOf(kind: ScrapeKind, size: number): SizeMemory | undefined {
  const run = spawnSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), '--size-memory', kind, String(size)],
    { encoding: 'utf8', maxBuffer: 1024 * 1024 },
  );
  if (run.status !== 0) {
    console.log(`  (memory of ${kind} ${size}: ${run.stderr.trim().split('\n').slice(-1)[0]})`);
    return undefined;
  }
  return JSON.parse(run.stdout) as SizeMemory;
}

// ---------------------------------------------------------------------------------------------------------
// Peak memory

const MiB = 1024 * 1024;

/**
 * `prefix`, then `unit` repeated to `total` characters, then `suffix`, as one flat string: a single join, so
 * that building the input leaves no cons-string tree or flattened copy behind to blur the measurement.
 */
function repeated(prefix: string, unit: string, total: number, suffix: string): string {
  const chunk = unit.repeat(Math.floor((64 * 1024) / unit.length));
  const parts = Array<string>(Math.floor(total / chunk.length)).fill(chunk);
  return [prefix, ...parts, suffix].join('');
}

/** Memory cases: name → [format, input builder]. Typical scrapes first, then inputs built to hurt. */
const MEMORY_CASES: Record<string, () => { format: ExpositionFormat; text: string }> = {
  'alltypes.237mfs.prom.txt': () => ({ format: 'prometheus', text: readFileSync(ALLTYPES, 'utf8') }),
  '100 SGLang scrapes as one (30,100 samples)': () => {
    const one = sglangScrape('prometheus');
    const text = Array.from({ length: 100 }, (_, k) => one.replaceAll('sglang:', `sglang${k}:`)).join('');
    return { format: 'prometheus', text };
  },
  '20 MB of \\\\ in one label value': () => ({
    format: 'prometheus',
    text: repeated('m{path="', '\\\\', 20 * MiB, '"} 1\n'),
  }),
  'same, OpenMetrics': () => ({
    format: 'openmetrics',
    text: repeated('m{path="', '\\\\', 20 * MiB, '"} 1\n# EOF\n'),
  }),
  '20 MB of \\" and \\n in one label value': () => ({
    format: 'prometheus',
    text: repeated('m{path="', '\\"\\n', 20 * MiB, '"} 1\n'),
  }),
  '20 MB two-byte label value with \\\\': () => ({
    format: 'prometheus',
    text: repeated('m{path="', 'é€\\\\', 20 * MiB, '"} 1\n'),
  }),
  '20 MB HELP text': () => ({
    format: 'prometheus',
    text: repeated('# HELP m ', 'help text ', 20 * MiB, '\nm 1\n'),
  }),
  '20 MB HELP text of \\\\': () => ({
    format: 'prometheus',
    text: repeated('# HELP m ', '\\\\', 20 * MiB, '\nm 1\n'),
  }),
  '1M tiny series': () => {
    // joined a thousand lines at a time: a million template strings at once would peak far above the parse
    const blocks: string[] = [];
    for (let block = 0; block < 1000; block++) {
      const lines: string[] = [];
      for (let i = block * 1000; i < (block + 1) * 1000; i++) lines.push(`s{i="${i}"} ${i}\n`);
      blocks.push(lines.join(''));
    }
    return { format: 'prometheus', text: blocks.join('') };
  },
};

interface MemoryFigure {
  inputBytes: number;
  samples: number;
  /** Growth of the process' peak RSS over its RSS just before the parse; null when the parse set no new peak. */
  peakRss: number | null;
  /** Heap + external memory allocated by the parse and not collected yet when it returns. */
  heldAtEnd: number;
  /** Heap + external memory still used after a full GC, with the result alive. */
  retained: number;
}

/** Runs in a child started with --expose-gc: parses one case and prints its MemoryFigure as JSON. */
function measureMemoryCase(name: string): void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const { format, text } = MEMORY_CASES[name]();
  const inputBytes = Buffer.byteLength(text, 'utf8');
  // compile the parser first: its code and feedback live on the heap too and would be counted on small inputs
  parseExposition(sglangScrape('prometheus'), 'prometheus');
  parseExposition(sglangScrape('openmetrics'), 'openmetrics');
  gc();
  gc();
  const before = process.memoryUsage();
  const peakBefore = process.resourceUsage().maxRSS;
  const result = parseExposition(text, format);
  const end = process.memoryUsage();
  const peakAfter = process.resourceUsage().maxRSS;
  // when building the input peaked higher than the parse, the parse's own peak is not visible: report that
  const peakRss = peakAfter > peakBefore ? peakAfter * 1024 - before.rss : null;
  gc();
  gc();
  const after = process.memoryUsage();
  const used = (m: NodeJS.MemoryUsage): number => m.heapUsed + m.external;
  const figure: MemoryFigure = {
    inputBytes,
    samples: result.sampleCount,
    peakRss,
    heldAtEnd: used(end) - used(before),
    retained: used(after) - used(before),
  };
  process.stdout.write(JSON.stringify(figure));
}

/**
 * What a parse may hold or keep, as a multiple of its input: escapes decoded by string concatenation held one
 * ~32-byte cons-string node per escape (≈16× the input); a flat decode stays far below this.
 */
const MEMORY_BOUND = 4;

function runMemoryBench(): void {
  console.log(
    '\nPeak memory of one parse (string input, a fresh process per case, parser warmed up, uncached)',
  );
  console.log(
    'peak RSS: growth of the process peak during the parse; held: heap+external at its end, before GC; ' +
      'retained: after GC with the result alive. × = ÷ input bytes\n',
  );
  const self = fileURLToPath(import.meta.url);
  for (const name of Object.keys(MEMORY_CASES)) {
    if (name.startsWith('alltypes') && !existsSync(ALLTYPES)) continue;
    const run = spawnSync(process.execPath, [...process.execArgv, self, '--memory-case', name], {
      encoding: 'utf8',
      maxBuffer: 1024 * 1024,
    });
    if (run.status !== 0) {
      console.log(`  ${name}: failed (${run.stderr.trim().split('\n').slice(-1)[0]})`);
      continue;
    }
    const f = JSON.parse(run.stdout) as MemoryFigure;
    const peak = f.peakRss;
    const mb = (n: number): string => `${fmt(n / MiB, 1)} MiB`;
    const x = (n: number): string => `${fmt(n / f.inputBytes, 2)}×`;
    console.log(
      `  ${name.padEnd(44)} input ${mb(f.inputBytes).padStart(10)}  peak RSS ${peak === null ? 'no new peak'.padStart(18) : `+${mb(peak).padStart(9)} ${x(peak).padStart(7)}`}` +
        `  held ${mb(f.heldAtEnd).padStart(9)} ${x(f.heldAtEnd).padStart(7)}  retained ${mb(f.retained).padStart(9)} ${x(f.retained).padStart(7)}` +
        `  (${f.samples} samples)` +
        (Math.max(f.heldAtEnd, f.retained) > MEMORY_BOUND * f.inputBytes
          ? `  OVER THE ${MEMORY_BOUND}× BOUND`
          : ''),
    );
  }
}

const memoryCase = process.argv.indexOf('--memory-case');
const sizeMemory = process.argv.indexOf('--size-memory');
if (memoryCase !== -1) {
  measureMemoryCase(process.argv[memoryCase + 1]);
} else if (sizeMemory !== -1) {
  measureSizeMemory(process.argv[sizeMemory + 1] as ScrapeKind, Number(process.argv[sizeMemory + 2]));
} else if (
  process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(resolve(process.argv[1])).href
) {
  // `--memory` runs only the peak-memory part, `--sizes` only the table by target size
  const only = process.argv.includes('--memory')
    ? Promise.resolve(runMemoryBench())
    : process.argv.includes('--sizes')
      ? Promise.resolve(runSizeBench(competitorContender()))
      : runParserBench();
  only.catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
