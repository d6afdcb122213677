// Days of history for the real Prometheus, made the way an operator would import the app's data: scrapes of a
// PD deployment written to a recording by the app's own RecordingWriter, exported with the app's own
// OpenMetrics export (what `pd-console recording export … openmetrics` writes), turned into TSDB blocks by
// `promtool tsdb create-blocks-from openmetrics`, handed to startPrometheus as its storage.
//
// The scrapes are computed from time (a diurnal load with deterministic noise), not simulated tick by tick:
// a week at 15 s is 40,320 scrapes per target, which a 1 s simulation would take minutes of CPU to produce.
// They carry what the history charts read, in the shapes SGLang and smg serve them: a decode server with two dp
// ranks, each with two tp replicas repeating one value (so max within a rank and sum over ranks both matter),
// KV token gauges and capacity, running/queued gauges, token and request counters, a TTFT histogram; an smg
// router with its request counter and duration histogram.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Exposition, MetricFamily } from '../../src/main/core/probes/exposition/types';
import type { Clock } from '../../src/main/core/clock';
import { RecordingWriter, readRecording, writeOpenMetricsFile } from '../../src/main/core/recording';
import { PROMTOOL_BIN } from './prometheus-server';
import { oneHostByRole } from '../recording/helpers';

const run = promisify(execFile);

export const TTFT_BOUNDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
export const ROUTER_BOUNDS = [0.1, 0.5, 1, 2.5, 5, 10, 30];
const CAPACITY_PER_RANK = 600_000;

export interface SyntheticScrape {
  ts: number;
  target: 'decode' | 'router';
  exp: Exposition;
}

/** A reproducible number in [0, 1) from an integer (a hash, so any scrape can be computed alone). */
function noise(n: number): number {
  let x = (n ^ 0x9e3779b9) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
  return ((x ^ (x >>> 16)) >>> 0) / 2 ** 32;
}

const load = (ts: number): number => {
  const hour = (ts / 3_600_000) % 24;
  return 0.55 + 0.35 * Math.sin((2 * Math.PI * (hour - 9)) / 24);
};

/**
 * The deployment's scrapes every `stepMs` from `startMs` (inclusive) to `endMs` (exclusive), timestamps on
 * the step's grid so a Prometheus query on the same grid sees exactly these samples.
 */
export function* syntheticScrapes(
  startMs: number,
  endMs: number,
  stepMs = 15_000,
): Generator<SyntheticScrape> {
  // Counters integrate the rate step by step, as a real server's would.
  let gen = 0;
  let prompt = 0;
  let requests = 0;
  const ttft = new Array<number>(TTFT_BOUNDS.length + 1).fill(0);
  let ttftSum = 0;
  const route = new Array<number>(ROUTER_BOUNDS.length + 1).fill(0);
  let routeSum = 0;
  let routed = 0;
  for (let ts = startMs, k = 0; ts < endMs; ts += stepMs, k++) {
    const l = load(ts);
    const dt = stepMs / 1000;
    const reqs = Math.round(l * 4 * dt * (0.8 + 0.4 * noise(k * 7 + 1)));
    requests += reqs;
    gen += Math.round(reqs * 220 * (0.9 + 0.2 * noise(k * 7 + 2)));
    prompt += Math.round(reqs * 1400 * (0.9 + 0.2 * noise(k * 7 + 3)));
    for (let r = 0; r < reqs; r++) {
      // TTFT grows with load: a request lands in a bucket by a noisy latency.
      const lat = 0.04 + l * l * 1.2 * -Math.log(1 - noise(k * 977 + r) * 0.999);
      const b = TTFT_BOUNDS.findIndex((x) => lat <= x);
      ttft[b < 0 ? TTFT_BOUNDS.length : b]++;
      ttftSum += lat;
      const rl = lat + 0.5 + noise(k * 1013 + r) * 3;
      const rb = ROUTER_BOUNDS.findIndex((x) => rl <= x);
      route[rb < 0 ? ROUTER_BOUNDS.length : rb]++;
      routeSum += rl;
      routed++;
    }
    const families: MetricFamily[] = [];
    const gauge = (name: string, value: (rank: number) => number): void => {
      const samples = [];
      for (let rank = 0; rank < 2; rank++)
        for (let tp = 0; tp < 2; tp++)
          samples.push({
            name,
            labels: { dp_rank: String(rank), tp_rank: String(tp), engine_type: 'decode' },
            value: value(rank),
          });
      families.push({ name, type: 'gauge', help: name, samples });
    };
    gauge('sglang:kv_used_tokens', (rank) =>
      Math.round(
        CAPACITY_PER_RANK *
          Math.min(0.98, l * (rank === 0 ? 1.05 : 0.85) * (0.9 + 0.2 * noise(k * 11 + rank))),
      ),
    );
    gauge('sglang:max_total_num_tokens', () => CAPACITY_PER_RANK);
    gauge('sglang:num_running_reqs', (rank) => Math.round(l * 40 + rank * 3 + noise(k * 13 + rank) * 6));
    gauge('sglang:num_queue_reqs', (rank) => Math.round(Math.max(0, l - 0.6) * 30 * noise(k * 17 + rank)));
    const counter = (name: string, value: number): void => {
      families.push({
        name,
        type: 'counter',
        help: name,
        samples: [{ name, labels: { model_name: 'Qwen/Qwen3-32B' }, value }],
      });
    };
    counter('sglang:generation_tokens_total', gen);
    counter('sglang:prompt_tokens_total', prompt);
    counter('sglang:num_requests_total', requests);
    families.push(
      histogramFamily('sglang:time_to_first_token_seconds', TTFT_BOUNDS, ttft, ttftSum, {
        model_name: 'Qwen/Qwen3-32B',
      }),
    );
    yield { ts, target: 'decode', exp: { format: 'prometheus', families, sampleCount: count(families) } };
    const router: MetricFamily[] = [
      {
        name: 'smg_router_requests_total',
        type: 'counter',
        help: 'routed requests',
        samples: [
          { name: 'smg_router_requests_total', labels: { route: '/v1/chat/completions' }, value: routed },
        ],
      },
      histogramFamily('smg_router_request_duration_seconds', ROUTER_BOUNDS, route, routeSum, {
        route: '/v1/chat/completions',
      }),
    ];
    yield {
      ts,
      target: 'router',
      exp: { format: 'prometheus', families: router, sampleCount: count(router) },
    };
  }
}

function histogramFamily(
  name: string,
  bounds: number[],
  perBucket: number[],
  sum: number,
  labels: Record<string, string>,
): MetricFamily {
  const samples = [];
  let acc = 0;
  for (let i = 0; i <= bounds.length; i++) {
    acc += perBucket[i];
    samples.push({
      name: `${name}_bucket`,
      labels: { ...labels, le: i < bounds.length ? String(bounds[i]) : '+Inf' },
      value: acc,
    });
  }
  samples.push({ name: `${name}_sum`, labels, value: sum }, { name: `${name}_count`, labels, value: acc });
  return { name, type: 'histogram', help: name, samples };
}

const count = (f: MetricFamily[]): number => f.reduce((n, x) => n + x.samples.length, 0);

function fixedClock(now: () => number): Clock {
  return { now, setTimeout: () => ({ id: 0 }), clearTimeout: () => undefined };
}

export interface Backfill {
  dir: string;
  recordingPath: string;
  openMetricsPath: string;
  /** TSDB blocks for startPrometheus({ blocksDir }). */
  blocksDir: string;
  samples: number;
  /** The label the export gives each target (`target="decode"`): the selector of the backfilled series. */
  selector(target: 'decode' | 'router'): string;
  cleanup(): Promise<void>;
}

/**
 * A recording of [startMs, endMs) at `stepMs` written by the app, exported as OpenMetrics by the app, and
 * turned into TSDB blocks by promtool.
 */
export async function backfill(startMs: number, endMs: number, stepMs = 15_000): Promise<Backfill> {
  const dir = await mkdtemp(join(tmpdir(), 'pd-backfill-'));
  const recordingPath = join(dir, 'history.pdrec.jsonl.gz');
  let now = startMs;
  const w = await RecordingWriter.open(
    recordingPath,
    {
      sessionId: 'backfill',
      name: 'backfilled history',
      startedAt: startMs,
      host: { id: 'demo', label: 'Demo GPU host', kind: 'demo' },
      // Made before services had ids, as a one-host 1P1D: review reads it as the fleet of one it is today.
      deployment: oneHostByRole(),
      appVersion: '0.1.0-test',
    },
    { clock: fixedClock(() => now), overview: false },
  );
  for (const s of syntheticScrapes(startMs, endMs, stepMs)) {
    now = s.ts;
    w.appendScrape(s.ts, s.target, s.exp);
  }
  await w.close();
  const rec = await readRecording(recordingPath);
  const openMetricsPath = join(dir, 'history.om.txt');
  const res = await writeOpenMetricsFile(rec, {}, openMetricsPath);
  if (res.skipped.length)
    throw new Error(`the OpenMetrics export left series out: ${res.skipped.join('; ')}`);
  const blocksDir = join(dir, 'blocks');
  await mkdir(blocksDir);
  await run(PROMTOOL_BIN, ['tsdb', 'create-blocks-from', 'openmetrics', openMetricsPath, blocksDir], {
    maxBuffer: 64 << 20,
  }).catch((err: { stderr?: string; message: string }) => {
    throw new Error(`promtool rejected the app's OpenMetrics export: ${err.message}\n${err.stderr ?? ''}`);
  });
  if ((await readdir(blocksDir)).length === 0) throw new Error('promtool made no TSDB block from the export');
  return {
    dir,
    recordingPath,
    openMetricsPath,
    blocksDir,
    samples: res.samples,
    selector: (target) => `target="${target}"`,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
