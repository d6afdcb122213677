import { z } from 'zod';
import type { PrometheusRequests } from '../api/prometheus';
import { id } from './common';

type Args<K extends keyof PrometheusRequests> = Parameters<PrometheusRequests[K]>[0];

const secret = z.string().min(1).max(4096);
const baseUrl = z
  .string()
  .max(2000)
  .regex(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, 'a base URL like http://127.0.0.1:9090 (no query string)');

export const prometheusSchemas = {
  getPrometheusStatus: z.strictObject({ deploymentId: id, fresh: z.boolean().optional() }),
  setPrometheusSource: z.strictObject({
    deploymentId: id,
    url: baseUrl.nullable(),
    viaHost: id.optional(),
    auth: z
      .discriminatedUnion('kind', [
        z.strictObject({ kind: z.literal('basic'), user: z.string().min(1).max(200), password: secret }),
        z.strictObject({ kind: z.literal('bearer'), token: secret }),
      ])
      .optional(),
    caFile: z.string().min(1).max(4096).optional(),
  }),
  exportPrometheusConfig: z.strictObject({ deploymentId: id }),
  exportGrafanaDashboard: z.strictObject({ deploymentId: id }),
} satisfies { [K in keyof PrometheusRequests]: z.ZodType<Args<K>> };
