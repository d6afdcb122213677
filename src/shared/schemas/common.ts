// Building blocks for argument schemas.
import { z } from 'zod';
import { ROLES } from '../domain';

export const id = z.string().min(1).max(200);
export const role = z.enum(ROLES);
export const empty = z.strictObject({});
