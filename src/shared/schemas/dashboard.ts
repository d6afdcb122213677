import { z } from 'zod';
import type { DashboardRequests } from '../api/dashboard';
import { batchKeysBound, empty, id, keyList, role, time } from './common';
import { DEMO_FAULT_NAMES, MAX_DEMO_FAULT_MS } from '../demo-faults';

/** A worker or host of the demo as the app names it ("decode-1", "gpu-b"). */
const demoName = z
  .string()
  .min(1)
  .max(80)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/);

type Args<K extends keyof DashboardRequests> = Parameters<DashboardRequests[K]>[0];

const maxPoints = z.number().int().min(2).max(200_000);

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
  clearForS: z.number().finite().min(0).max(86_400).optional(),
  margin: z.number().finite().min(0).max(1e9).optional(),
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
    .refine(...batchKeysBound),
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
  demoControl: z
    .strictObject({
      deploymentId: id,
      fault: z.enum(DEMO_FAULT_NAMES),
      on: z.boolean(),
      role: role.optional(),
      worker: demoName.optional(),
      host: demoName.optional(),
      forS: z
        .number()
        .int()
        .min(1)
        .max(MAX_DEMO_FAULT_MS / 1000)
        .optional(),
    })
    .refine((a) => [a.role, a.worker, a.host].filter((t) => t !== undefined).length <= 1, {
      message: 'name at most one of role, worker and host',
      path: ['worker'],
    })
    .refine((a) => a.forS === undefined || a.on, {
      message: 'a duration (forS) is for turning a fault on',
      path: ['forS'],
    }),
  getDemoFaults: z.strictObject({ deploymentId: id }),
} satisfies { [K in keyof DashboardRequests]: z.ZodType<Args<K>> };
