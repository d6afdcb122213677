// The metric eras the demo host can run, named after the upstream code they reproduce.
/**
 * SGLang server metric eras, as the upstream code defines them (shared/reference/upstream/README.md):
 * E1 autumn 2025 @93d04878, E2 early 2026 @44cedc2b, E3 @00eef542, E4 newest @016d8605.
 */
export type DemoEra = 'E1' | 'E2' | 'E3' | 'E4';
export const DEMO_ERAS: readonly DemoEra[] = ['E1', 'E2', 'E3', 'E4'];
/**
 * Router eras: sglang-router 0.2.4 in PD mode (sgl_router_*), smg 0.3–1.4 (smg_*, no `path` label on
 * smg_http_responses_total), smg ≥ 1.5 (with it), smg ≥ 1.7 started with --engine-metrics (+ smg_engine_*).
 */
export type RouterEra = 'sglang-router-0.2.4' | 'smg-0.3' | 'smg-1.5' | 'smg-engine-metrics';
export const ROUTER_ERAS: readonly RouterEra[] = [
  'sglang-router-0.2.4',
  'smg-0.3',
  'smg-1.5',
  'smg-engine-metrics',
];

export function isSmgEra(era: RouterEra): boolean {
  return era !== 'sglang-router-0.2.4';
}
