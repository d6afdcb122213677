// Building blocks for argument schemas.
import { z } from 'zod';
import { ROLES } from '../domain';

export const id = z.string().min(1).max(200);
export const role = z.enum(ROLES);
export const empty = z.strictObject({});

/** Who asked for an action, as the timeline records it. */
export const requestedBy = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._@ -]+$/)
  .optional();
