import { z } from 'zod';
import type { DashboardRequests } from '../api/dashboard';
import { empty, id, role } from './common';
import { DEMO_FAULT_NAMES } from '../demo-faults';
import { isScopedSignalKey } from '../signals/is-signal-key';
import type { ScopedKey } from '../signals/scoped-key';

type Args<K extends keyof DashboardRequests> = Parameters<DashboardRequests[K]>[0];

const signalKey = z.custom<ScopedKey>((v) => typeof v === 'string' && isScopedSignalKey(v), {
  error: (iss) =>
    `${JSON.stringify(iss.input)} is not a signal key: keys read <role>.<signal> (decode.kv_ratio, ` +
    'router.router_requests_per_s, gpu.0.util) as listed in src/shared/signals/spec.ts, optionally scoped ' +
    'to a fleet worker or host after an @ (decode.kv_ratio@decode-1, gpu.3.util@gpu-b)',
});
const time = z.number().finite();
const keyList = z.array(signalKey).min(1).max(64);
const maxPoints = z.number().int().min(2).max(200_000);
/** A page of the console shows up to ~30 charts; more keys than this in one request is not a page. */
const MAX_BATCH_KEYS = 512;

export const alertRuleSchema = z.strictObject({
  id: z
    .string()
    .min(1)
    .max(80)
    .regex(/^[A-Za-z0-9_.-]+$/),
  kind: z.enum([
    'kv-high',
    'service-inactive',
    'health-failing',
    'restart-loop',
    'metrics-stale',
    'transfer-failures',
    'queue-growing',
  ]),
  enabled: z.boolean(),
  roles: z.array(role).max(3),
  severity: z.enum(['warning', 'error']),
  threshold: z.number().finite().min(0).max(1e9).optional(),
  forS: z.number().finite().min(0).max(86_400).optional(),
  windowS: z.number().finite().min(1).max(86_400).optional(),
});

export const dashboardSchemas = {
  getSignalCatalog: z.strictObject({ deploymentId: id }),
  getSeries: z.strictObject({
    deploymentId: id,
    keys: keyList,
    fromMs: time.optional(),
    toMs: time.optional(),
    maxPoints,
  }),
  getSeriesBatch: z
    .strictObject({
      deploymentId: id,
      fromMs: time.optional(),
      toMs: time.optional(),
      groups: z
        .array(z.strictObject({ keys: keyList, maxPoints }))
        .min(1)
        .max(64),
    })
    .refine((q) => q.groups.reduce((n, g) => n + g.keys.length, 0) <= MAX_BATCH_KEYS, {
      error: `a history batch may name at most ${MAX_BATCH_KEYS} keys in all; split it`,
      path: ['groups'],
    }),
  getDashboard: z.strictObject({ deploymentId: id }),
  getAlertRules: empty,
  setAlertRules: z.strictObject({ rules: z.array(alertRuleSchema).max(100) }),
  followJournal: z.strictObject({
    deploymentId: id,
    role,
    worker: id.optional(),
    lines: z.number().int().min(0).max(5000).optional(),
  }),
  unfollowJournal: z.strictObject({ followId: id }),
  journalAround: z.strictObject({
    deploymentId: id,
    role: role.optional(),
    worker: id.optional(),
    ts: time,
    spanMs: z.number().int().min(1000).max(3_600_000).optional(),
  }),
  demoControl: z.strictObject({
    deploymentId: id,
    fault: z.enum(DEMO_FAULT_NAMES),
    on: z.boolean(),
    role: role.optional(),
  }),
} satisfies { [K in keyof DashboardRequests]: z.ZodType<Args<K>> };
