// The one signal evaluator: every signal of one target over the columns of its scrapes, for the newest row
// (the live push) and for every row (review, charts) alike — the same code, driven by the signal
// specification (src/shared/signals/spec.ts).
import type { SignalMissing } from '@shared/contract';
import type { Role } from '@shared/domain';
import { SGL_ROUTER, SGLANG, SMG } from '@shared/signals/metric-names';
import { ROUTER_SIGNALS, SERVER_SIGNALS, specsFor, type SignalSpec } from '@shared/signals/spec';
import type { TargetColumns } from '../../review/target-columns';
import type { Exposition } from '../../probes/exposition/types';
import { scrapeColumns } from '../scrape-columns';
import { routerSignalColumns } from './router';
import { serverSignalColumns } from './server';
import type { EvaluateOptions, TargetSignals } from './types';

export type { EvaluateOptions, TargetSignals } from './types';
export type { KvMeta } from './kv';

export function evaluateTarget(cols: TargetColumns, role: Role, opts: EvaluateOptions = {}): TargetSignals {
  return role === 'router' ? routerSignalColumns(cols, opts) : serverSignalColumns(cols, role, opts);
}

/**
 * The point-in-time signals of a single scrape (gauges and KV; windowed signals need two scrapes and read
 * null): what a restart reads to judge a service's load.
 */
export function evaluateScrape(exp: Exposition, role: Role): Record<string, number | null> {
  const sig = evaluateTarget(scrapeColumns(role, exp, isSignalInput), role);
  const out: Record<string, number | null> = {};
  for (const [key, col] of sig.values) out[key] = col[0] === col[0] ? col[0] : null;
  return out;
}

const familiesOf = (spec: SignalSpec): string[] =>
  (spec.metrics ?? []).flatMap((m) =>
    spec.kind === 'quantile' || spec.histogramForm ? [m, `${m}_bucket`, `${m}_sum`, `${m}_count`] : [m],
  );

const INPUTS = new Set<string>([
  ...[...Object.values(SERVER_SIGNALS), ...Object.values(ROUTER_SIGNALS)].flatMap((s) =>
    familiesOf(s as SignalSpec),
  ),
  ...Object.values(SGLANG),
  `${SGLANG.kvTransferSpeedGbS}_sum`,
  `${SGLANG.kvTransferSpeedGbS}_count`,
  `${SGLANG.kvTransferTotalMb}_sum`,
  ...Object.values(SMG),
  ...Object.values(SGL_ROUTER),
]);

/** Whether the evaluator reads a sample name (the live columns keep, and review decodes, only these). */
export function isSignalInput(name: string): boolean {
  return INPUTS.has(name) || name.startsWith(SMG.enginePrefix);
}

/**
 * The signals of `role` whose families a target does not serve at all, each with the families that would
 * provide it and why they may be missing (the specification's words, after `context`).
 */
export function notExposed(
  role: Role,
  has: (family: string) => boolean,
  context: string,
): Record<string, SignalMissing> {
  const out: Record<string, SignalMissing> = {};
  for (const [name, spec] of Object.entries(specsFor(role))) {
    if (!spec.metrics || spec.notOn?.includes(role) || !expectedOn(spec, role)) continue;
    if (spec.metrics.some((m) => has(m) || has(`${m}_count`) || has(`${m}_bucket`))) continue;
    out[`${role}.${name}`] = {
      expected: [...spec.metrics],
      why: `${context}: ${spec.missing ?? 'not exposed by this server version'}`,
    };
  }
  return out;
}

/** Whether a server of `role` should serve the signal's family (signals without a rule: every role). */
function expectedOn(spec: SignalSpec, role: Role): boolean {
  switch (spec.expectedOn ?? 'any') {
    case 'any':
      return true;
    case 'not-prefill':
      return role !== 'prefill';
    case 'not-decode':
      return role !== 'decode';
    case 'pd':
      return role === 'prefill' || role === 'decode';
    case 'prefill':
      return role === 'prefill';
    case 'decode':
      return role === 'decode';
    case 'never':
      return false;
  }
}
