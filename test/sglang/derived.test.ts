import { describe, expect, it } from 'vitest';
import {
  cacheHitRate,
  counterIncrease,
  counterRate,
  deriveRouterSignals,
  deriveServerSignals,
  DERIVED_SERVER_KEYS,
  histogramQuantile,
  isControlPath,
  kvTransferGbps,
  SeriesWindow,
  sumRate,
  timeToFullSeconds,
  windowQuantile,
} from '../../src/main/core/probes/sglang/derived';
import { fixtureText, prom } from './prom';

const T0 = 1_800_000_000_000;
const s = (sec: number) => T0 + sec * 1000;

function windowOf(
  scrapes: [number, string][],
  opts?: ConstructorParameters<typeof SeriesWindow>[0],
): SeriesWindow {
  const win = new SeriesWindow(opts);
  for (const [sec, text] of scrapes) win.ingest(s(sec), prom(text));
  return win;
}

describe('counterIncrease / counterRate', () => {
  it('treats a decrease as a reset from 0', () => {
    const pts = [
      { t: s(0), v: 10 },
      { t: s(10), v: 15 },
      { t: s(20), v: 3 },
      { t: s(30), v: 8 },
    ];
    // (15-10) + 3 (reset: counter restarted at 0 and reached 3) + (8-3) = 5 + 3 + 5 = 13
    expect(counterIncrease(pts)).toBe(13);
    // 13 / (30 s) = 0.4333…
    expect(counterRate(pts)).toBeCloseTo(13 / 30, 12);
  });

  it('needs two points spanning some time', () => {
    expect(counterIncrease([{ t: s(0), v: 1 }])).toBeNull();
    expect(counterRate([{ t: s(0), v: 1 }])).toBeNull();
    expect(
      counterRate([
        { t: s(0), v: 1 },
        { t: s(0), v: 2 },
      ]),
    ).toBeNull();
  });
});

describe('histogramQuantile (Prometheus semantics)', () => {
  const b = (pairs: [number, number][]) => pairs.map(([le, count]) => ({ le, count }));

  it('interpolates linearly inside the bucket', () => {
    const buckets = b([
      [0.1, 10],
      [0.2, 30],
      [Infinity, 40],
    ]);
    // p50: rank = 0.5 × 40 = 20 → bucket (0.1, 0.2]: 0.1 + (20-10)/(30-10) × 0.1 = 0.15
    expect(histogramQuantile(0.5, buckets)).toBeCloseTo(0.15, 12);
    // p10: rank = 4 → first bucket, lower bound 0: 0 + 4/10 × 0.1 = 0.04
    expect(histogramQuantile(0.1, buckets)).toBeCloseTo(0.04, 12);
    // p90: rank = 36 > 30 → falls in +Inf → highest finite bound 0.2
    expect(histogramQuantile(0.9, buckets)).toBe(0.2);
  });

  it('NaN without a +Inf bucket, without observations, or with a single bucket', () => {
    expect(histogramQuantile(0.5, b([[0.1, 3]]))).toBeNaN();
    expect(
      histogramQuantile(
        0.5,
        b([
          [0.1, 0],
          [Infinity, 0],
        ]),
      ),
    ).toBeNaN();
    expect(histogramQuantile(0.5, b([[Infinity, 5]]))).toBeNaN();
    expect(histogramQuantile(NaN, b([[Infinity, 5]]))).toBeNaN();
  });

  it('q outside [0,1] gives ∓Inf', () => {
    const buckets = b([
      [1, 1],
      [Infinity, 1],
    ]);
    expect(histogramQuantile(-0.1, buckets)).toBe(-Infinity);
    expect(histogramQuantile(1.1, buckets)).toBe(Infinity);
  });

  it('returns the upper bound of a first bucket that is ≤ 0', () => {
    // rank = 0.2 × 10 = 2 → first bucket (le=-1, count 5); its bound is ≤ 0 → -1
    expect(
      histogramQuantile(
        0.2,
        b([
          [-1, 5],
          [0, 10],
          [Infinity, 10],
        ]),
      ),
    ).toBe(-1);
  });

  it('sorts, merges equal bounds and forces monotonic counts', () => {
    // unsorted; le=1 given twice (4 + 6 = 10); le=2 has 8 < 10 → forced to 10; +Inf 20
    // p50: rank 10 → first bucket with count ≥ 10 is le=1: 0 + (10/10) × 1 = 1
    expect(
      histogramQuantile(
        0.5,
        b([
          [Infinity, 20],
          [2, 8],
          [1, 4],
          [1, 6],
        ]),
      ),
    ).toBe(1);
    // p75: rank 15 → le=2 bucket has 10 < 15 → +Inf → highest finite bound 2
    expect(
      histogramQuantile(
        0.75,
        b([
          [Infinity, 20],
          [2, 8],
          [1, 10],
        ]),
      ),
    ).toBe(2);
  });
});

describe('SeriesWindow', () => {
  it('keeps only tracked names, prunes by age, ignores out-of-order scrapes', () => {
    const win = new SeriesWindow({ windowMs: 60_000 });
    win.ingest(s(0), prom('sglang:prompt_tokens_total 10\nsglang:num_running_reqs 3\n'));
    win.ingest(s(30), prom('sglang:prompt_tokens_total 20\n'));
    win.ingest(s(20), prom('sglang:prompt_tokens_total 999\n')); // older than the latest: ignored
    expect(win.series('sglang:num_running_reqs')).toEqual([]);
    expect(win.series('sglang:prompt_tokens_total')[0].points.map((p) => p.v)).toEqual([10, 20]);
    win.ingest(s(70), prom('sglang:prompt_tokens_total 30\n')); // s(0) is now older than 60 s
    expect(win.series('sglang:prompt_tokens_total')[0].points.map((p) => p.v)).toEqual([20, 30]);
    // query window shorter than the buffer
    expect(win.series('sglang:prompt_tokens_total', 10_000)[0].points.map((p) => p.v)).toEqual([30]);
  });

  it('bounds the number of series and counts what it refused', () => {
    const win = new SeriesWindow({ maxSeries: 2 });
    win.ingest(
      s(0),
      prom(
        'sglang:prompt_tokens_total{a="1"} 1\nsglang:prompt_tokens_total{a="2"} 1\nsglang:prompt_tokens_total{a="3"} 1\n',
      ),
    );
    expect(win.series('sglang:prompt_tokens_total')).toHaveLength(2);
    expect(win.droppedSeries).toBe(1);
  });

  it('forgets series that stopped appearing once they age out', () => {
    const win = new SeriesWindow({ windowMs: 10_000 });
    win.ingest(s(0), prom('sglang:prompt_tokens_total{x="old"} 1\n'));
    win.ingest(s(20), prom('sglang:prompt_tokens_total{x="new"} 1\n'));
    expect(win.series('sglang:prompt_tokens_total').map((x) => x.labels.x)).toEqual(['new']);
  });
});

describe('windowed quantiles and rates', () => {
  it('applies the quantile to bucket increases over the window, not to lifetime counts', () => {
    const win = windowOf([
      [
        0,
        'sglang:time_to_first_token_seconds_bucket{le="0.1"} 100\nsglang:time_to_first_token_seconds_bucket{le="0.2"} 200\nsglang:time_to_first_token_seconds_bucket{le="+Inf"} 250\n',
      ],
      [
        30,
        'sglang:time_to_first_token_seconds_bucket{le="0.1"} 110\nsglang:time_to_first_token_seconds_bucket{le="0.2"} 230\nsglang:time_to_first_token_seconds_bucket{le="+Inf"} 290\n',
      ],
    ]);
    // increases: le=0.1: 10, le=0.2: 30, +Inf: 40
    // p50: rank 20 → 0.1 + (20-10)/(30-10) × 0.1 = 0.15   (lifetime counts would give rank 145 → 0.145)
    expect(windowQuantile(win, 'sglang:time_to_first_token_seconds', 0.5)).toBeCloseTo(0.15, 12);
    // p99: rank 39.6 > 30 → +Inf bucket → 0.2
    expect(windowQuantile(win, 'sglang:time_to_first_token_seconds', 0.99)).toBe(0.2);
  });

  it('survives a server restart inside the window (bucket counters reset)', () => {
    const h = (a: number, b: number, c: number) =>
      `sglang:e2e_request_latency_seconds_bucket{le="1"} ${a}\nsglang:e2e_request_latency_seconds_bucket{le="2"} ${b}\nsglang:e2e_request_latency_seconds_bucket{le="+Inf"} ${c}\n`;
    const win = windowOf([
      [0, h(50, 80, 100)],
      [10, h(52, 84, 106)], // +2, +4, +6
      [20, h(1, 3, 4)], // restart: +1, +3, +4
      [30, h(3, 9, 10)], // +2, +6, +6
    ]);
    // le=1: 2+1+2 = 5; le=2: 4+3+6 = 13; +Inf: 6+4+6 = 16
    // p50: rank 8 → bucket (1,2]: 1 + (8-5)/(13-5) × 1 = 1.375
    expect(windowQuantile(win, 'sglang:e2e_request_latency_seconds', 0.5)).toBeCloseTo(1.375, 12);
  });

  it('null when the window saw no observation or only one scrape', () => {
    const text =
      'sglang:time_to_first_token_seconds_bucket{le="1"} 5\nsglang:time_to_first_token_seconds_bucket{le="+Inf"} 5\n';
    expect(windowQuantile(windowOf([[0, text]]), 'sglang:time_to_first_token_seconds', 0.5)).toBeNull();
    expect(
      windowQuantile(
        windowOf([
          [0, text],
          [30, text],
        ]),
        'sglang:time_to_first_token_seconds',
        0.5,
      ),
    ).toBeNull();
  });

  it('sums rates across series', () => {
    const win = windowOf([
      [0, 'sglang:prompt_tokens_total{priority="0"} 1000\nsglang:prompt_tokens_total{priority="1"} 0\n'],
      [30, 'sglang:prompt_tokens_total{priority="0"} 4000\nsglang:prompt_tokens_total{priority="1"} 600\n'],
    ]);
    // (4000-1000)/30 + (600-0)/30 = 100 + 20 = 120 tokens/s
    expect(sumRate(win, 'sglang:prompt_tokens_total')).toBeCloseTo(120, 12);
  });
});

describe('cache hit rate and KV transfer speed', () => {
  it('prefers cache_source="total" over adding the sources to it', () => {
    const win = windowOf([
      [
        0,
        'sglang:prompt_tokens_total 1000\nsglang:cached_tokens_total{cache_source="device"} 0\nsglang:cached_tokens_total{cache_source="host"} 0\nsglang:cached_tokens_total{cache_source="total"} 0\n',
      ],
      [
        30,
        'sglang:prompt_tokens_total 4000\nsglang:cached_tokens_total{cache_source="device"} 1000\nsglang:cached_tokens_total{cache_source="host"} 200\nsglang:cached_tokens_total{cache_source="total"} 1200\n',
      ],
    ]);
    // Δcached(total) / Δprompt = 1200 / 3000 = 0.4   (adding all three would give 2400/3000 = 0.8)
    expect(cacheHitRate(win)).toBeCloseTo(0.4, 12);
  });

  it('unlabelled cached_tokens_total (older versions) and no-traffic windows', () => {
    const win = windowOf([
      [0, 'sglang:prompt_tokens_total 100\nsglang:cached_tokens_total 10\n'],
      [30, 'sglang:prompt_tokens_total 300\nsglang:cached_tokens_total 60\n'],
    ]);
    // (60-10)/(300-100) = 50/200 = 0.25
    expect(cacheHitRate(win)).toBeCloseTo(0.25, 12);
    const idle = windowOf([
      [0, 'sglang:prompt_tokens_total 100\n'],
      [30, 'sglang:prompt_tokens_total 100\n'],
    ]);
    expect(cacheHitRate(idle)).toBeNull();
  });

  it('gauge era: the latest speed, slowest dp rank', () => {
    const win = windowOf([
      [0, 'sglang:kv_transfer_speed_gb_s{dp_rank="0"} 30\nsglang:kv_transfer_speed_gb_s{dp_rank="1"} 25\n'],
      [
        30,
        'sglang:kv_transfer_speed_gb_s{dp_rank="0"} 18.5\nsglang:kv_transfer_speed_gb_s{dp_rank="1"} 22\n',
      ],
    ]);
    expect(kvTransferGbps(win)).toEqual({ value: 18.5, method: 'speed_gauge' });
  });

  it('histogram era: Δsum/Δcount of the speed histogram', () => {
    const win = windowOf([
      [0, 'sglang:kv_transfer_speed_gb_s_sum 100\nsglang:kv_transfer_speed_gb_s_count 10\n'],
      [30, 'sglang:kv_transfer_speed_gb_s_sum 160\nsglang:kv_transfer_speed_gb_s_count 13\n'],
    ]);
    // (160-100)/(13-10) = 60/3 = 20 GB/s per transfer
    expect(kvTransferGbps(win)).toEqual({ value: 20, method: 'speed_histogram' });
  });

  it('total_mb histogram only: aggregate MB/s ÷ 1000', () => {
    const win = windowOf([
      [0, 'sglang:kv_transfer_total_mb_sum 5000\nsglang:kv_transfer_total_mb_count 5\n'],
      [30, 'sglang:kv_transfer_total_mb_sum 35000\nsglang:kv_transfer_total_mb_count 35\n'],
    ]);
    // (35000-5000) MB / 30 s = 1000 MB/s = 1.0 GB/s
    expect(kvTransferGbps(win)).toEqual({ value: 1, method: 'total_mb_rate' });
  });
});

describe('deriveServerSignals on §7.2-style decode scrapes', () => {
  const base = fixtureText('decode-newest.prom');
  const later = base
    .replace(
      'sglang:generation_tokens_total{engine_type="decode",is_streaming="true",model_name="Qwen/Qwen3-32B"} 9.021377e+06',
      'sglang:generation_tokens_total{engine_type="decode",is_streaming="true",model_name="Qwen/Qwen3-32B"} 9090728',
    )
    .replace(
      /(inter_token_latency_seconds_bucket\{engine_type="decode",le="0.025",model_name="Qwen\/Qwen3-32B"\}) 8.40112e\+06/,
      '$1 8465120',
    )
    .replace(
      /(inter_token_latency_seconds_bucket\{engine_type="decode",le="\+Inf",model_name="Qwen\/Qwen3-32B"\}) 9.019844e\+06/,
      '$1 9089844',
    );

  it('computes throughput and ITL quantiles from the window', () => {
    expect(later).not.toBe(base);
    const win = windowOf([
      [0, base],
      [30, later],
    ]);
    const sig = deriveServerSignals(win);
    expect(Object.keys(sig).sort()).toEqual([...DERIVED_SERVER_KEYS].sort());
    // (9090728 - 9021377) / 30 s = 69351 / 30 = 2311.7 tokens/s
    expect(sig.generation_tokens_per_s).toBeCloseTo(2311.7, 9);
    // ITL bucket increases: le=0.025: 8465120-8401120 = 64000; +Inf: 9089844-9019844 = 70000
    // p50: rank 35000 ≤ 64000 → first bucket: 0 + 35000/64000 × 0.025 = 0.013671875
    expect(sig.itl_p50_s).toBeCloseTo(0.013671875, 12);
    // p99: rank 69300 > 64000 → +Inf → highest finite bound 0.025
    expect(sig.itl_p99_s).toBe(0.025);
    // E2E and TTFT did not move in the window: no observations → null, not 0
    expect(sig.e2e_p50_s).toBeNull();
    expect(sig.ttft_p50_s).toBeNull();
    expect(sig.kv_transfer_gb_s).toBeNull();
  });
});

describe('router signals in both eras', () => {
  it('smg: routed requests/s and 5xx share of traffic paths (console polling excluded)', () => {
    const win = windowOf([
      [
        0,
        'smg_router_requests_total{endpoint="chat"} 1000\n' +
          'smg_http_responses_total{path="/v1/chat/completions",status_code="200",error_code=""} 1000\n' +
          'smg_http_responses_total{path="/v1/chat/completions",status_code="503",error_code="no_workers"} 4\n' +
          'smg_http_responses_total{path="/readiness",status_code="200",error_code=""} 50\n',
      ],
      [
        30,
        'smg_router_requests_total{endpoint="chat"} 1100\n' +
          'smg_http_responses_total{path="/v1/chat/completions",status_code="200",error_code=""} 1090\n' +
          'smg_http_responses_total{path="/v1/chat/completions",status_code="503",error_code="no_workers"} 14\n' +
          'smg_http_responses_total{path="/readiness",status_code="200",error_code=""} 80\n',
      ],
    ]);
    const sig = deriveRouterSignals(win);
    // (1100-1000)/30 = 3.333… requests/s
    expect(sig.router_requests_per_s).toBeCloseTo(100 / 30, 12);
    // 5xx: 14-4 = 10; all traffic responses: 90 + 10 = 100 (the 30 /readiness polls excluded) → 0.1
    expect(sig.router_error_share).toBeCloseTo(0.1, 12);
  });

  it('PD-mode sglang-router ≤ 0.2.4: requests, error share and latency from sgl_router_pd_*', () => {
    const hist = (le: Array<[string, number]>, sum: number, count: number): string =>
      le
        .map(
          ([l, n]) =>
            `sgl_router_pd_request_duration_seconds_bucket{route="/v1/chat/completions",le="${l}"} ${n}\n`,
        )
        .join('') +
      `sgl_router_pd_request_duration_seconds_sum{route="/v1/chat/completions"} ${sum}\n` +
      `sgl_router_pd_request_duration_seconds_count{route="/v1/chat/completions"} ${count}\n`;
    const win = windowOf([
      [
        0,
        'sgl_router_pd_requests_total{route="/v1/chat/completions"} 900\n' +
          'sgl_router_pd_errors_total{error_type="server_selection"} 2\n' +
          'sgl_router_pd_decode_errors_total{worker="http://d:1"} 1\n' +
          // The middleware counts every route, /health included: not the traffic denominator.
          'sgl_router_http_responses_total{status_code="200"} 5000\n' +
          hist(
            [
              ['1', 100],
              ['10', 800],
              ['+Inf', 890],
            ],
            4000,
            890,
          ),
      ],
      [
        30,
        'sgl_router_pd_requests_total{route="/v1/chat/completions"} 960\n' +
          'sgl_router_pd_errors_total{error_type="server_selection"} 4\n' +
          'sgl_router_pd_decode_errors_total{worker="http://d:1"} 2\n' +
          'sgl_router_http_responses_total{status_code="200"} 9000\n' +
          hist(
            [
              ['1', 150],
              ['10', 850],
              ['+Inf', 950],
            ],
            4300,
            950,
          ),
      ],
    ]);
    const sig = deriveRouterSignals(win);
    // (960-900)/30 = 2 requests/s
    expect(sig.router_requests_per_s).toBeCloseTo(2, 12);
    // errors: server_selection +2, decode +1 = 3 of 60 requests = 0.05
    expect(sig.router_error_share).toBeCloseTo(0.05, 12);
    // 60 new observations: 50 in (0,1], 0 in (1,10], 10 in (10,+Inf) → p50 rank 30, inside the first bucket:
    // 0 + 30/50 × 1 = 0.6
    expect(sig.router_latency_p50_s).toBeCloseTo(0.6, 12);
  });

  it('smg before 1.5 (no path label): every response counts, the console polls included', () => {
    const win = windowOf([
      [
        0,
        'smg_router_requests_total{endpoint="chat"} 100\n' +
          'smg_http_responses_total{status_code="200",error_code=""} 150\n' +
          'smg_http_responses_total{status_code="503",error_code="no_workers"} 0\n',
      ],
      [
        30,
        'smg_router_requests_total{endpoint="chat"} 190\n' +
          'smg_http_responses_total{status_code="200",error_code=""} 290\n' +
          'smg_http_responses_total{status_code="503",error_code="no_workers"} 10\n',
      ],
    ]);
    // 10 of 150 responses (90 + 10 traffic, 50 /health,/readiness,/workers polls that cannot be told apart)
    expect(deriveRouterSignals(win).router_error_share).toBeCloseTo(10 / 150, 12);
  });

  it('sgl_router with upstream status codes (an unreleased 2025-12 build; never in a release)', () => {
    const win = windowOf([
      [
        0,
        'sgl_router_requests_total{route="/v1/chat/completions"} 900\nsgl_router_requests_total{route="/health"} 40\n' +
          'sgl_router_upstream_http_responses_total{route="/v1/chat/completions",status_code="200"} 893\n' +
          'sgl_router_upstream_http_responses_total{route="/v1/chat/completions",status_code="502"} 7\n',
      ],
      [
        30,
        'sgl_router_requests_total{route="/v1/chat/completions"} 960\nsgl_router_requests_total{route="/health"} 70\n' +
          'sgl_router_upstream_http_responses_total{route="/v1/chat/completions",status_code="200"} 950\n' +
          'sgl_router_upstream_http_responses_total{route="/v1/chat/completions",status_code="502"} 10\n',
      ],
    ]);
    const sig = deriveRouterSignals(win);
    // (960-900)/30 = 2 requests/s (/health excluded)
    expect(sig.router_requests_per_s).toBeCloseTo(2, 12);
    // 502: +3 of (57 + 3) = 3/60 = 0.05
    expect(sig.router_error_share).toBeCloseTo(0.05, 12);
  });

  it('sgl_router without upstream status counters: errors / requests', () => {
    const win = windowOf([
      [
        0,
        'sgl_router_requests_total{route="/generate"} 100\nsgl_router_request_errors_total{route="/generate",error_type="x"} 1\n',
      ],
      [
        30,
        'sgl_router_requests_total{route="/generate"} 200\nsgl_router_request_errors_total{route="/generate",error_type="x"} 6\n',
      ],
    ]);
    // (6-1)/(200-100) = 5/100 = 0.05
    expect(deriveRouterSignals(win).router_error_share).toBeCloseTo(0.05, 12);
  });

  it('no traffic → error share null (unknown), not 0', () => {
    const text = 'smg_http_responses_total{path="/v1/chat/completions",status_code="200"} 5\n';
    expect(
      deriveRouterSignals(
        windowOf([
          [0, text],
          [30, text],
        ]),
      ).router_error_share,
    ).toBeNull();
  });

  it('knows which paths are the console’s own polling', () => {
    for (const p of [
      '/health',
      '/readiness',
      '/workers',
      '/workers/abc',
      '/get_server_info',
      '/v1/models',
      '/metrics',
    ]) {
      expect(isControlPath(p)).toBe(true);
    }
    for (const p of ['/v1/chat/completions', '/generate', '/v1/completions'])
      expect(isControlPath(p)).toBe(false);
  });
});

describe('timeToFullSeconds', () => {
  const at = (ratios: (number | null)[], stepS = 10) => ({
    t: ratios.map((_, i) => s(i * stepS)),
    ratio: ratios,
  });

  it('extrapolates the least-squares slope to ratio 1', () => {
    // ratios 0.50, 0.51, … 0.56 every 10 s: slope = 0.01 / 10 s = 0.001 /s; (1 - 0.56) / 0.001 = 440 s
    expect(timeToFullSeconds(at([0.5, 0.51, 0.52, 0.53, 0.54, 0.55, 0.56]))).toBeCloseTo(440, 9);
  });

  it('null when flat, falling, too short, or too far out', () => {
    expect(timeToFullSeconds(at([0.5, 0.5, 0.5, 0.5, 0.5, 0.5]))).toBeNull();
    expect(timeToFullSeconds(at([0.6, 0.59, 0.58, 0.57, 0.56, 0.55]))).toBeNull();
    expect(timeToFullSeconds(at([0.5, 0.6, 0.7]))).toBeNull(); // 3 points < minPoints 5
    expect(timeToFullSeconds(at([0.5, 0.51, 0.52, 0.53, 0.54], 1))).toBeNull(); // spans 4 s < 30 s
    // slope 1e-6 /s: (1 - 0.100004) / 1e-6 ≈ 900 000 s > 24 h
    expect(timeToFullSeconds(at([0.1, 0.10001, 0.10002, 0.10003, 0.10004]))).toBeNull();
  });

  it('uses only the run after the last gap (a restart empties the pool)', () => {
    // before the gap usage fell from 0.9; after it, 0.10 → 0.14 in 10 s steps: slope 0.001 /s → (1-0.14)/0.001 = 860 s
    const h = at([0.9, 0.8, 0.7, null, 0.1, 0.11, 0.12, 0.13, 0.14]);
    expect(timeToFullSeconds(h)).toBeCloseTo(860, 9);
  });

  it('0 when already full; regression window limits how far back it looks', () => {
    expect(timeToFullSeconds(at([0.9, 0.95, 0.98, 0.99, 1.0, 1.0]))).toBe(0);
    // 0.0 for 10 minutes, then 0.50 → 0.54 in 10 s steps. A 40 s window sees only the climb:
    // 0.50..0.54 → slope 0.001 /s → (1 - 0.54)/0.001 = 460 s (the flat zeros would drag a longer fit)
    const ratios = [...Array<number>(60).fill(0), 0.5, 0.51, 0.52, 0.53, 0.54];
    const full = timeToFullSeconds(at(ratios), { windowMs: 40_000 });
    expect(full).toBeCloseTo(460, 9);
  });
});
