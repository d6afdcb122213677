import { z } from 'zod';
import type { HostsRequests } from '../api/hosts';
import { empty, id } from './common';
import { hostConfigSchema } from './monitoring';

type Args<K extends keyof HostsRequests> = Parameters<HostsRequests[K]>[0];

const hostInput = hostConfigSchema.extend({ id: hostConfigSchema.shape.id.optional() });
const hostPatch = hostConfigSchema.omit({ id: true }).partial();

export const hostsSchemas = {
  listHosts: empty,
  addHost: z.strictObject({ host: hostInput }),
  updateHost: z.strictObject({ id, patch: hostPatch }),
  removeHost: z.strictObject({ id }),
  answerSshPrompt: z.strictObject({
    promptId: z.string().regex(/^[A-Za-z0-9-]{1,64}$/),
    accept: z.boolean().optional(),
    secret: z.string().max(4096).nullable().optional(),
    remember: z.boolean().optional(),
  }),
} satisfies { [K in keyof HostsRequests]: z.ZodType<Args<K>> };
