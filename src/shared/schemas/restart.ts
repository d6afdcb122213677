import { z } from 'zod';
import { RESTART_TARGETS, type RestartRequests } from '../api/restart';
import { empty, id } from './common';

type Args<K extends keyof RestartRequests> = Parameters<RestartRequests[K]>[0];

const target = z.enum(RESTART_TARGETS);
// Up to six hours: a longer limit would hide a stuck restart rather than wait for a slow model load.
const limitMs = z
  .number()
  .int()
  .min(1_000)
  .max(6 * 3600_000);
const timeouts = z.strictObject({
  drainMs: limitMs.optional(),
  activeMs: limitMs.optional(),
  healthMs: limitMs.optional(),
  routerMs: limitMs.optional(),
});
const plan = z.strictObject({ deploymentId: id, target, drain: z.boolean().optional() });

export const restartSchemas = {
  planRestart: plan,
  startRestart: plan.extend({
    requestedBy: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9._@ -]+$/)
      .optional(),
  }),
  getRestart: z.strictObject({ operationId: id }),
  listRestarts: z.strictObject({ deploymentId: id }),
  cancelRestart: z.strictObject({ operationId: id }),
  getRestartSettings: empty,
  setRestartSettings: z.strictObject({
    readOnly: z.boolean().optional(),
    polkit: z.boolean().optional(),
    stackOrder: z.enum(['parallel', 'prefill-first', 'decode-first']).optional(),
    stackIncludesRouter: z.boolean().optional(),
    timeouts: z.strictObject({ server: timeouts.optional(), router: timeouts.optional() }).optional(),
  }),
} satisfies { [K in keyof RestartRequests]: z.ZodType<Args<K>> };
