// The alert rules an operator starts with. Each can be tuned or switched off (setAlertRules).
import type { AlertRule } from '@shared/contract';

export const DEFAULT_ALERT_RULES: readonly AlertRule[] = [
  // Fires on the fullest dp rank's KV ratio, not the summed one: that rank refuses requests first.
  {
    id: 'decode-kv-high',
    kind: 'kv-high',
    enabled: true,
    roles: ['decode'],
    severity: 'warning',
    threshold: 0.9,
    forS: 30,
  },
  { id: 'service-inactive', kind: 'service-inactive', enabled: true, roles: [], severity: 'error', forS: 5 },
  { id: 'health-failing', kind: 'health-failing', enabled: true, roles: [], severity: 'error', forS: 15 },
  {
    id: 'restart-loop',
    kind: 'restart-loop',
    enabled: true,
    roles: [],
    severity: 'error',
    threshold: 3,
    windowS: 600,
  },
  { id: 'metrics-stale', kind: 'metrics-stale', enabled: true, roles: [], severity: 'warning', forS: 15 },
  {
    id: 'transfer-failures',
    kind: 'transfer-failures',
    enabled: true,
    roles: ['prefill', 'decode'],
    severity: 'warning',
    threshold: 1,
    windowS: 60,
  },
  {
    id: 'queue-growing',
    kind: 'queue-growing',
    enabled: true,
    roles: ['prefill', 'decode'],
    severity: 'warning',
    threshold: 5,
    forS: 120,
  },
];

/**
 * How long fresh data must show a kind's condition clear before its alert resolves (s), when the rule does not
 * say (AlertRule.clearForS). The counting kinds read a window that already smooths (a restart loop is over once
 * its window holds fewer restarts); the state kinds wait as long as they waited to fire, so one good poll between
 * bad ones does not end the alert.
 */
const CLEAR_FOR_S: Record<AlertRule['kind'], number> = {
  'kv-high': 30,
  'service-inactive': 5,
  'health-failing': 15,
  'restart-loop': 0,
  'metrics-stale': 10,
  'transfer-failures': 0,
  'queue-growing': 30,
};

export function clearForS(rule: AlertRule): number {
  return rule.clearForS ?? CLEAR_FOR_S[rule.kind];
}

/**
 * Hysteresis, in the threshold's unit (AlertRule.margin): a KV alert at 90 % clears only below 88 %, a queue
 * alert only once the queue grows by less than half the threshold over its window; the other kinds read states
 * and counts, which do not hover.
 */
export function marginOf(rule: AlertRule): number {
  if (rule.margin !== undefined) return rule.margin;
  if (rule.kind === 'kv-high') return 0.02;
  if (rule.kind === 'queue-growing') return (rule.threshold ?? 5) / 2;
  return 0;
}

/** Rule kinds that only make sense for SGLang servers (the router has no KV pool or PD queues). */
export const SERVER_ONLY_KINDS: ReadonlySet<AlertRule['kind']> = new Set([
  'kv-high',
  'transfer-failures',
  'queue-growing',
]);
