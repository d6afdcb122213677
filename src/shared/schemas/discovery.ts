import { z } from 'zod';
import type { DiscoveryRequests } from '../api/discovery';
import { id } from './common';

type Args<K extends keyof DiscoveryRequests> = Parameters<DiscoveryRequests[K]>[0];

export const discoverySchemas = {
  discover: z.strictObject({ deploymentId: id }),
  getMetricsInventory: z.strictObject({ deploymentId: id, service: id }),
} satisfies { [K in keyof DiscoveryRequests]: z.ZodType<Args<K>> };
