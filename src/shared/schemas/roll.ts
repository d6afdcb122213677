import { z } from 'zod';
import type { RollRequests } from '../api/roll';
import { id, role, requestedBy } from './common';

type Args<K extends keyof RollRequests> = Parameters<RollRequests[K]>[0];

/** A worker is named by its URL as the router lists it (`http://10.0.0.3:30000@2`) or by one of its units. */
const rollTarget = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('worker'),
    worker: z
      .string()
      .min(1)
      .max(300)
      .regex(/^[A-Za-z0-9._:/@[\]-]+$/),
  }),
  z.strictObject({ kind: z.literal('role'), role }),
  z.strictObject({ kind: z.literal('deployment') }),
]);
const plan = z.strictObject({ deploymentId: id, target: rollTarget });
const ref = z.strictObject({ deploymentId: id, rollId: id });

export const rollSchemas = {
  planRoll: plan,
  startRoll: plan.extend({
    requestedBy,
    withoutGpuCheck: z.boolean().optional(),
  }),
  getRoll: ref,
  listRolls: z.strictObject({ deploymentId: id }),
  cancelRoll: ref,
} satisfies { [K in keyof RollRequests]: z.ZodType<Args<K>> };
