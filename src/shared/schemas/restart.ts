import { z } from 'zod';
import { RESTART_TARGETS, type RestartRequests } from '../api/restart';
import { empty, id, requestedBy } from './common';

type Args<K extends keyof RestartRequests> = Parameters<RestartRequests[K]>[0];

const target = z.enum(RESTART_TARGETS);
// Up to six hours: a longer limit would hide a stuck restart rather than wait for a slow model load.
export const restartLimitMs = z
  .number()
  .int()
  .min(1_000)
  .max(6 * 3600_000);
export const restartTimeoutsPatch = z.strictObject({
  drainMs: restartLimitMs.optional(),
  activeMs: restartLimitMs.optional(),
  healthMs: restartLimitMs.optional(),
  routerMs: restartLimitMs.optional(),
});
export const stackOrder = z.enum(['parallel', 'prefill-first', 'decode-first']);
/** A change to the restart settings: the API's argument and the settings file's section alike. */
export const restartSettingsPatch = z.strictObject({
  readOnly: z.boolean().optional(),
  polkit: z.boolean().optional(),
  stackOrder: stackOrder.optional(),
  stackIncludesRouter: z.boolean().optional(),
  timeouts: z
    .strictObject({ server: restartTimeoutsPatch.optional(), router: restartTimeoutsPatch.optional() })
    .optional(),
});
const plan = z.strictObject({ deploymentId: id, target, drain: z.boolean().optional() });

export const restartSchemas = {
  planRestart: plan,
  startRestart: plan.extend({
    requestedBy,
  }),
  getRestart: z.strictObject({ operationId: id }),
  listRestarts: z.strictObject({ deploymentId: id }),
  cancelRestart: z.strictObject({ operationId: id }),
  getRestartSettings: empty,
  setRestartSettings: restartSettingsPatch,
} satisfies { [K in keyof RestartRequests]: z.ZodType<Args<K>> };
