// The one signal evaluator on real Prometheus text through the production parser: the live columns of a
// few scrapes, the newest row evaluated — exactly what the live push runs (review runs the same functions over
// every row of a recording).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import { isControlPath } from '../../src/main/core/probes/sglang/control-paths';
import {
  evaluateScrape,
  evaluateTarget,
  isSignalInput,
  notExposed,
} from '../../src/main/core/signals/evaluate';
import { scrapeNotes } from '../../src/main/core/signals/evaluate/notes';
import { timeToFull } from '../../src/main/core/signals/evaluate/time-to-full';
import { LiveColumns } from '../../src/main/core/signals/live-columns';
import { SERVER_SIGNALS, type SignalSpec } from '../../src/shared/signals/spec';
import type { Role } from '../../src/shared/domain';

const T0 = 1_800_000_000_000;
const s = (sec: number): number => T0 + sec * 1000;
const parse = (text: string) => parseExposition(text, 'prometheus');
const fixtureText = (name: string): string =>
  readFileSync(join(__dirname, '..', 'sglang', 'fixtures', name), 'utf8');
const fixture = (name: string) => parse(fixtureText(name));

/** Every signal at the newest of `scrapes` ([seconds, text]), as the live store evaluates it. */
function at(
  scrapes: [number, string][],
  role: Role = 'decode',
  rateWindowMs = 60_000,
): Record<string, number | null> {
  const live = new LiveColumns({ keepMs: rateWindowMs, track: isSignalInput });
  for (const [sec, text] of scrapes) live.append(s(sec), parse(text));
  const cols = live.columns(role);
  const last = cols.rows - 1;
  const sig = evaluateTarget(cols, role, { rateWindowMs, from: last });
  const out: Record<string, number | null> = {};
  for (const [k, col] of sig.values) out[k] = col[last] === col[last] ? col[last] : null;
  return out;
}

const missingKeys = (role: Role, exp: ReturnType<typeof parse>): string[] => {
  const names = new Set(exp.families.flatMap((f) => f.samples.map((x) => x.name)));
  return Object.keys(notExposed(role, (n) => names.has(n), 'test'))
    .map((k) => k.slice(k.indexOf('.') + 1))
    .sort();
};

describe('live columns', () => {
  it('keep only tracked names, prune by age, ignore out-of-order scrapes', () => {
    const live = new LiveColumns({ keepMs: 60_000, track: isSignalInput });
    live.append(s(0), parse('sglang:prompt_tokens_total 10\nsome_other_family 3\n'));
    live.append(s(30), parse('sglang:prompt_tokens_total 20\n'));
    expect(live.append(s(20), parse('sglang:prompt_tokens_total 999\n'))).toBe(false);
    const cols = live.columns('decode');
    expect(cols.has('some_other_family')).toBe(false);
    expect([...cols.series('sglang:prompt_tokens_total')[0].v]).toEqual([10, 20]);
    live.append(s(70), parse('sglang:prompt_tokens_total 30\n')); // s(0) is now older than 60 s
    const later = live.columns('decode');
    expect(later.rows).toBe(2);
    expect([...later.series('sglang:prompt_tokens_total')[0].v]).toEqual([20, 30]);
  });

  it('bound the number of series and count what they refused', () => {
    const live = new LiveColumns({ keepMs: 60_000, track: isSignalInput, maxSeries: 2 });
    live.append(
      s(0),
      parse(
        'sglang:prompt_tokens_total{a="1"} 1\nsglang:prompt_tokens_total{a="2"} 1\nsglang:prompt_tokens_total{a="3"} 1\n',
      ),
    );
    expect(live.columns('decode').series('sglang:prompt_tokens_total')).toHaveLength(2);
    expect(live.droppedSeries).toBe(1);
  });

  it('forget series that stopped appearing once they age out', () => {
    const live = new LiveColumns({ keepMs: 10_000, track: isSignalInput });
    live.append(s(0), parse('sglang:prompt_tokens_total{x="old"} 1\n'));
    live.append(s(20), parse('sglang:prompt_tokens_total{x="new"} 1\n'));
    expect(
      live
        .columns('decode')
        .series('sglang:prompt_tokens_total')
        .map((x) => x.labels.x),
    ).toEqual(['new']);
  });

  it('a counter reset inside the window counts the new value as the increase', () => {
    const v = at([
      [0, 'sglang:generation_tokens_total 10\n'],
      [10, 'sglang:generation_tokens_total 15\n'],
      [20, 'sglang:generation_tokens_total 3\n'],
      [30, 'sglang:generation_tokens_total 8\n'],
    ]);
    // increases 5 + 3 (reset) + 5 = 13 over 30 s
    expect(v.generation_tokens_per_s).toBeCloseTo(13 / 30, 12);
  });
});

describe('windowed quantiles and rates', () => {
  it('applies the quantile to bucket increases over the window, not to lifetime counts', () => {
    const v = at([
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
    expect(v.ttft_p50_s).toBeCloseTo(0.15, 12);
    // p99: rank 39.6 > 30 → +Inf bucket → 0.2
    expect(v.ttft_p99_s).toBe(0.2);
  });

  it('survives a server restart inside the window (bucket counters reset)', () => {
    const h = (a: number, b: number, c: number) =>
      `sglang:e2e_request_latency_seconds_bucket{le="1"} ${a}\nsglang:e2e_request_latency_seconds_bucket{le="2"} ${b}\nsglang:e2e_request_latency_seconds_bucket{le="+Inf"} ${c}\n`;
    const v = at([
      [0, h(50, 80, 100)],
      [10, h(52, 84, 106)], // +2, +4, +6
      [20, h(1, 3, 4)], // restart: +1, +3, +4
      [30, h(3, 9, 10)], // +2, +6, +6
    ]);
    // le=1: 2+1+2 = 5; le=2: 4+3+6 = 13; +Inf: 6+4+6 = 16
    // p50: rank 8 → bucket (1,2]: 1 + (8-5)/(13-5) × 1 = 1.375
    expect(v.e2e_p50_s).toBeCloseTo(1.375, 12);
  });

  it('null when the window saw no observation or only one scrape', () => {
    const text =
      'sglang:time_to_first_token_seconds_bucket{le="1"} 5\nsglang:time_to_first_token_seconds_bucket{le="+Inf"} 5\n';
    expect(at([[0, text]]).ttft_p50_s).toBeNull();
    expect(
      at([
        [0, text],
        [30, text],
      ]).ttft_p50_s,
    ).toBeNull();
  });

  it('sums rates across series', () => {
    const v = at([
      [0, 'sglang:prompt_tokens_total{priority="0"} 1000\nsglang:prompt_tokens_total{priority="1"} 0\n'],
      [30, 'sglang:prompt_tokens_total{priority="0"} 4000\nsglang:prompt_tokens_total{priority="1"} 600\n'],
    ]);
    // (4000-1000)/30 + (600-0)/30 = 100 + 20 = 120 tokens/s
    expect(v.prompt_tokens_per_s).toBeCloseTo(120, 12);
  });
});

describe('cache hit rate and KV transfer speed', () => {
  it('prefers cache_source="total" over adding the sources to it', () => {
    const v = at([
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
    expect(v.cache_hit_rate_window).toBeCloseTo(0.4, 12);
  });

  it('unlabelled cached_tokens_total (older versions) and no-traffic windows', () => {
    const v = at([
      [0, 'sglang:prompt_tokens_total 100\nsglang:cached_tokens_total 10\n'],
      [30, 'sglang:prompt_tokens_total 300\nsglang:cached_tokens_total 60\n'],
    ]);
    // (60-10)/(300-100) = 50/200 = 0.25
    expect(v.cache_hit_rate_window).toBeCloseTo(0.25, 12);
    const idle = at([
      [0, 'sglang:prompt_tokens_total 100\n'],
      [30, 'sglang:prompt_tokens_total 100\n'],
    ]);
    expect(idle.cache_hit_rate_window).toBeNull();
  });

  it('gauge era: the latest speed, slowest dp rank', () => {
    const v = at([
      [0, 'sglang:kv_transfer_speed_gb_s{dp_rank="0"} 30\nsglang:kv_transfer_speed_gb_s{dp_rank="1"} 25\n'],
      [
        30,
        'sglang:kv_transfer_speed_gb_s{dp_rank="0"} 18.5\nsglang:kv_transfer_speed_gb_s{dp_rank="1"} 22\n',
      ],
    ]);
    expect(v.kv_transfer_gb_s).toBe(18.5);
  });

  it('histogram era: Δsum/Δcount of the speed histogram', () => {
    const v = at([
      [0, 'sglang:kv_transfer_speed_gb_s_sum 100\nsglang:kv_transfer_speed_gb_s_count 10\n'],
      [30, 'sglang:kv_transfer_speed_gb_s_sum 160\nsglang:kv_transfer_speed_gb_s_count 13\n'],
    ]);
    // (160-100)/(13-10) = 60/3 = 20 GB/s per transfer
    expect(v.kv_transfer_gb_s).toBe(20);
  });

  it('total_mb histogram only: aggregate MB/s ÷ 1000', () => {
    const v = at([
      [0, 'sglang:kv_transfer_total_mb_sum 5000\nsglang:kv_transfer_total_mb_count 5\n'],
      [30, 'sglang:kv_transfer_total_mb_sum 35000\nsglang:kv_transfer_total_mb_count 35\n'],
    ]);
    // (35000-5000) MB / 30 s = 1000 MB/s = 1.0 GB/s
    expect(v.kv_transfer_gb_s).toBe(1);
  });
});

describe('server signals on §7.2-style decode scrapes', () => {
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
    const v = at([
      [0, base],
      [30, later],
    ]);
    const sig = v;
    for (const [key, spec] of Object.entries(SERVER_SIGNALS) as [string, SignalSpec][])
      if (spec.metrics && !spec.notOn?.includes('decode')) expect(sig, key).toHaveProperty(key);
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
    const v = at(
      [
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
      ],
      'router',
    );
    const sig = v;
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
    const v = at(
      [
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
      ],
      'router',
    );
    const sig = v;
    // (960-900)/30 = 2 requests/s
    expect(sig.router_requests_per_s).toBeCloseTo(2, 12);
    // errors: server_selection +2, decode +1 = 3 of 60 requests = 0.05
    expect(sig.router_error_share).toBeCloseTo(0.05, 12);
    // 60 new observations: 50 in (0,1], 0 in (1,10], 10 in (10,+Inf) → p50 inside the first bucket
    // p50: rank 30 of 60, inside (0, 1] holding 50: 0 + 30/50 × 1 = 0.6
    expect(sig.router_latency_p50_s).toBeCloseTo(0.6, 12);
  });

  it('smg before 1.5 (no path label): errors of routed requests, so the console polls do not dilute it', () => {
    const scrape = (requests: number, ok: number, unavailable: number, errors: number): string =>
      `smg_router_requests_total{endpoint="chat"} ${requests}\n` +
      `smg_http_responses_total{status_code="200",error_code=""} ${ok}\n` +
      `smg_http_responses_total{status_code="503",error_code="no_workers"} ${unavailable}\n` +
      `smg_router_request_errors_total{endpoint="chat",error_type="no_workers"} ${errors}\n`;
    const v = at(
      [
        [0, scrape(100, 150, 0, 0)],
        // 90 routed requests, 10 of them failed; 50 more 200s are /health, /readiness and /workers polls.
        [30, scrape(190, 290, 10, 10)],
      ],
      'router',
    );
    // 10 errors of 90 routed requests (counting the responses would give 10 / 150)
    expect(v.router_error_share).toBeCloseTo(10 / 90, 12);
    // Before the first error the counter is absent: no error among the routed requests is a share of 0.
    const quiet = at(
      [
        [0, 'smg_router_requests_total{endpoint="chat"} 100\n'],
        [30, 'smg_router_requests_total{endpoint="chat"} 190\n'],
      ],
      'router',
    );
    expect(quiet.router_error_share).toBe(0);
  });

  it('sgl_router with upstream status codes (an unreleased 2025-12 build; never in a release)', () => {
    const v = at(
      [
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
      ],
      'router',
    );
    const sig = v;
    // (960-900)/30 = 2 requests/s (/health excluded)
    expect(sig.router_requests_per_s).toBeCloseTo(2, 12);
    // 502: +3 of (57 + 3) = 3/60 = 0.05
    expect(sig.router_error_share).toBeCloseTo(0.05, 12);
  });

  it('sgl_router without upstream status counters: errors / requests', () => {
    const v = at(
      [
        [
          0,
          'sgl_router_requests_total{route="/generate"} 100\nsgl_router_request_errors_total{route="/generate",error_type="x"} 1\n',
        ],
        [
          30,
          'sgl_router_requests_total{route="/generate"} 200\nsgl_router_request_errors_total{route="/generate",error_type="x"} 6\n',
        ],
      ],
      'router',
    );
    // (6-1)/(200-100) = 5/100 = 0.05
    expect(v.router_error_share).toBeCloseTo(0.05, 12);
  });

  it('no traffic → error share null (unknown), not 0', () => {
    const text = 'smg_http_responses_total{path="/v1/chat/completions",status_code="200"} 5\n';
    expect(
      at(
        [
          [0, text],
          [30, text],
        ],
        'router',
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

describe('timeToFull (the KV forecast)', () => {
  /** The forecast at the last of `ratios` taken every `stepS` seconds (null = a gap); null for NaN. */
  const ttfOf = (ratios: (number | null)[], stepS = 10, windowMs?: number): number | null => {
    const out = timeToFull(
      ratios.map((_, i) => s(i * stepS)),
      ratios.map((r) => r ?? NaN),
      windowMs,
    );
    const last = out[out.length - 1];
    return last === last ? last : null;
  };

  it('extrapolates the least-squares slope to ratio 1', () => {
    // ratios 0.50, 0.51, … 0.62 every 10 s (2 min): slope 0.001 /s; (1 - 0.62) / 0.001 = 380 s
    expect(ttfOf(Array.from({ length: 13 }, (_, i) => 0.5 + i / 100))).toBeCloseTo(380, 9);
  });

  it('null when flat, falling, too short, or too far out', () => {
    expect(ttfOf([0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5])).toBeNull();
    expect(ttfOf(Array.from({ length: 13 }, (_, i) => 0.6 - i / 100))).toBeNull();
    expect(ttfOf([0.5, 0.6, 0.7])).toBeNull(); // 3 points < minPoints 5
    // slope 1e-6 /s: (1 - 0.100012) / 1e-6 ≈ 900 000 s > 24 h
    expect(ttfOf(Array.from({ length: 13 }, (_, i) => 0.1 + i * 1e-5))).toBeNull();
  });

  it('smoothed over minutes: no forecast from less than 2 min of a climb', () => {
    // 90 s of a steady climb from 40 % to 85 %: "full in ~30 s" would be one burst's ramp, not a trend.
    const climb = Array.from({ length: 10 }, (_, i) => 0.4 + i * 0.05);
    expect(ttfOf(climb)).toBeNull();
    // The same climb continued to 2 min is a trend.
    expect(ttfOf(Array.from({ length: 13 }, (_, i) => 0.2 + i * 0.05))).toBeCloseTo(40, 6);
  });

  it('"full" (0) at 99 % and above, not a countdown of milliseconds', () => {
    // 2 min rising to 99.5 %: the old forecast said "full in ~138 ms" here.
    const rising = Array.from({ length: 13 }, (_, i) => 0.875 + i * 0.01);
    expect(rising[12]).toBeCloseTo(0.995, 9);
    expect(ttfOf(rising)).toBe(0);
    expect(ttfOf([...rising.slice(0, 12), 0.99])).toBe(0);
  });

  it("from the last minute's level, not one batch's spike", () => {
    // A pool rising slowly from 61 % (+0.01 %/s, a scrape a second), its newest sample one batch's spike to 78 %:
    // the forecast stays near the trend's 3600 s from 64 %; extrapolating from the spike said 2000 s.
    const slow = Array.from({ length: 301 }, (_, i) => 0.61 + i * 0.0001);
    const steady = ttfOf(slow, 1)!;
    const spiked = ttfOf([...slow.slice(0, 300), 0.78], 1)!;
    expect(steady).toBeCloseTo(3600, 6);
    expect(spiked / steady).toBeGreaterThan(0.85);
  });

  it('none once the last minute falls: the turned half of a wave is not filling', () => {
    // 4 min of a rise from 30 % to 78 %, then a minute falling back to 66 %: the 5 min fit still rises.
    const wave = [
      ...Array.from({ length: 25 }, (_, i) => 0.3 + i * 0.02),
      ...Array.from({ length: 6 }, (_, i) => 0.76 - i * 0.02),
    ];
    expect(ttfOf(wave)).toBeNull();
  });

  it('null when the trend is lost in the noise; a fill through noise is still forecast', () => {
    // A prefill pool: mostly empty, a batch's spike of up to 20 % now and then, drifting up by 1 % over 5 min.
    let seed = 7;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const spiky = Array.from({ length: 300 }, (_, i) => (rand() < 0.3 ? 0.2 * rand() : 0) + (0.01 * i) / 300);
    expect(ttfOf(spiky, 1)).toBeNull();
    // The same scatter over a fill from 30 % to 90 % in those 5 min: forecast, near the clean line's 50 s.
    const filling = spiky.map((x, i) => x + 0.3 + (0.6 * i) / 300);
    expect(ttfOf(filling, 1)).toBeGreaterThan(20);
    expect(ttfOf(filling, 1)).toBeLessThan(100);
  });

  it('uses only the run after the last gap (a restart empties the pool)', () => {
    // before the gap usage fell from 0.9; after it, 0.10 → 0.22 in 10 s steps: slope 0.001 /s → (1-0.22)/0.001 = 780 s
    const after = Array.from({ length: 13 }, (_, i) => 0.1 + i / 100);
    expect(ttfOf([0.9, 0.8, 0.7, null, ...after])).toBeCloseTo(780, 9);
  });

  it('0 when already full; regression window limits how far back it looks', () => {
    expect(ttfOf([0.9, 0.95, 0.98, 0.99, 1.0, 1.0])).toBe(0);
    // 0.0 for 10 minutes, then 0.50 → 0.54 in 10 s steps. A 40 s window sees only the climb:
    // 0.50..0.54 → slope 0.001 /s → (1 - 0.54)/0.001 = 460 s (the flat zeros would drag a longer fit)
    const ratios = [...Array<number>(60).fill(0), 0.5, 0.51, 0.52, 0.53, 0.54];
    const full = ttfOf(ratios, 10, 40_000);
    expect(full).toBeCloseTo(460, 9);
  });
});

describe('point-in-time signals of one scrape', () => {
  it('newest prefill (§7.1): queues under the new bootstrap name, KV transfer as histogram', () => {
    const exp = fixture('prefill-newest.prom');
    const v = evaluateScrape(exp, 'prefill');
    expect(v.running).toBe(3);
    expect(v.queued).toBe(2);
    expect(v.prefill_bootstrap_queue).toBe(1);
    expect(v.prefill_inflight_queue).toBe(4);
    expect(v.cache_hit_rate).toBe(0.63);
    expect(v.retracted).toBe(0); // pid-labelled series still read
    expect(v.bootstrap_failed_total).toBe(0);
    // histogram era: mean since start = _sum / _count = 41977.3 / 1533 = 27.3825...
    expect(v.kv_transfer_latency_ms).toBeCloseTo(41977.3 / 1533, 10);
    expect(v.decode_prealloc_queue).toBeNull();
    // The fixture has no speed histogram: a PD prefill should, so the UI is told.
    expect(missingKeys('prefill', exp)).toContain('kv_transfer_speed_gb_s');
    expect(missingKeys('prefill', exp)).not.toContain('kv_transfer_latency_ms');
    expect(scrapeNotes(v, 'prefill')).toEqual([]);
  });

  it('newest decode (§7.2): decode queues, pending prealloc, failures; missing PD signals are listed', () => {
    const exp = fixture('decode-newest.prom');
    const v = evaluateScrape(exp, 'decode');
    expect(v.running).toBe(57);
    expect(v.gen_throughput).toBe(2311.7);
    expect(v.decode_prealloc_queue).toBe(1);
    expect(v.decode_transfer_queue).toBe(3);
    expect(v.pending_prealloc_token_usage).toBe(0.02);
    expect(v.transfer_failed_total).toBe(2);
    expect(v.prefill_bootstrap_queue).toBeNull();
    const missing = missingKeys('decode', exp);
    expect(missing).toEqual(expect.arrayContaining(['kv_transfer_latency_ms', 'kv_transfer_speed_gb_s']));
    // Prefill-only gauges and the cache_hit_rate gauge are not expected of decode.
    expect(missing).not.toContain('prefill_bootstrap_queue');
    expect(missing).not.toContain('cache_hit_rate');
  });

  it('never reads the cache_hit_rate gauge on decode, where every decode log zeroes it', () => {
    const text = `# TYPE sglang:cache_hit_rate gauge
sglang:cache_hit_rate{tp_rank="0"} 0.0
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{tp_rank="0"} 12
`;
    expect(evaluateScrape(parse(text), 'decode').cache_hit_rate).toBeNull();
    // A prefill server's gauge is its last prefill batch's ratio and is read as such.
    expect(evaluateScrape(parse(text.replace('0.0', '0.42')), 'prefill').cache_hit_rate).toBe(0.42);
  });

  it('autumn 2025 prefill: old prealloc queue name, gauge-era KV transfer, the running=0 misreading noted', () => {
    const exp = fixture('prefill-2025-10.prom');
    const v = evaluateScrape(exp, 'prefill');
    expect(v.prefill_bootstrap_queue).toBe(2);
    expect(v.prefill_inflight_queue).toBe(6);
    expect(v.kv_transfer_speed_gb_s).toBe(18.5);
    expect(v.kv_transfer_latency_ms).toBe(27);
    expect(v.running).toBe(0);
    expect(scrapeNotes(v, 'prefill').join(' ')).toMatch(/#31495/);
  });

  it('sums dp ranks and collapses tp-rank replicas', () => {
    // dp0: 10 (tp_rank 0 and 1 repeat it), dp1: 25 → 10 + 25 = 35
    expect(evaluateScrape(fixture('decode-dp.prom'), 'decode').running).toBe(35);
  });

  it('uses the priority="" totals instead of adding per-priority series to them', () => {
    const exp = parse(`sglang:num_queue_reqs{priority="",tp_rank="0"} 7
sglang:num_queue_reqs{priority="0",tp_rank="0"} 3
sglang:num_queue_reqs{priority="1",tp_rank="0"} 4
`);
    expect(evaluateScrape(exp, 'decode').queued).toBe(7);
  });

  it('histogram kv_transfer_* before the first transfer is null, not NaN, and counts as exposed', () => {
    const exp = parse(`# TYPE sglang:kv_transfer_latency_ms histogram
sglang:kv_transfer_latency_ms_bucket{le="+Inf"} 0
sglang:kv_transfer_latency_ms_sum 0
sglang:kv_transfer_latency_ms_count 0
`);
    expect(evaluateScrape(exp, 'decode').kv_transfer_latency_ms).toBeNull();
    expect(missingKeys('decode', exp)).not.toContain('kv_transfer_latency_ms');
  });

  it('a router scrape gives no server figure, and the router is not asked for server families', () => {
    const exp = fixture('router-smg.prom');
    const v = evaluateScrape(exp, 'decode');
    expect(v.running).toBeNull();
    expect(v.kv_ratio).toBeNull();
    expect(missingKeys('router', exp)).not.toContain('running');
  });
});
