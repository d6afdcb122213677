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

/** Rule kinds that only make sense for SGLang servers (the router has no KV pool or PD queues). */
export const SERVER_ONLY_KINDS: ReadonlySet<AlertRule['kind']> = new Set([
  'kv-high',
  'transfer-failures',
  'queue-growing',
]);
