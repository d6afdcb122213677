import { z } from 'zod';
import {
  DEMO_ROUTER_ERAS,
  DEMO_SERVER_ERAS,
  DEMO_TOPOLOGIES,
  type MonitoringRequests,
} from '../api/monitoring';
import { empty, id } from './common';
import { isPlainLine, PLAIN_LINE_MESSAGE } from '../display-text';

type Args<K extends keyof MonitoringRequests> = Parameters<MonitoringRequests[K]>[0];

export const hostConfigSchema = z.strictObject({
  id: id.regex(/^[A-Za-z0-9._@:-]+$/),
  label: z.string().min(1).max(200).refine(isPlainLine, `label ${PLAIN_LINE_MESSAGE}`),
  kind: z.enum(['demo', 'ssh']),
  alias: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^\s'"`$;&|<>\\]+$/)
    .optional(),
  hostname: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9._:\-[\]]+$/)
    .optional(),
  port: z.number().int().min(1).max(65535).optional(),
  user: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9._-]+$/)
    .optional(),
  identityFile: z.string().min(1).max(1024).optional(),
});

export const monitoringSchemas = {
  getAppInfo: empty,
  listDeployments: empty,
  openDemo: z.strictObject({
    speed: z.number().positive().max(10_000).optional(),
    era: z.enum(DEMO_SERVER_ERAS).optional(),
    router: z.enum(DEMO_ROUTER_ERAS).optional(),
    topology: z.enum(DEMO_TOPOLOGIES).optional(),
  }),
  connectHost: z.strictObject({ host: hostConfigSchema }),
  closeDeployment: z.strictObject({ deploymentId: id }),
  listEvents: z.strictObject({ deploymentId: id }),
} satisfies { [K in keyof MonitoringRequests]: z.ZodType<Args<K>> };
