import { z } from 'zod';
import type { HistoryRequests } from '../api/history';
import { batchKeysBound, id, keyList as keys, time } from './common';

type Args<K extends keyof HistoryRequests> = Parameters<HistoryRequests[K]>[0];

const points = z.number().int().min(2).max(11_000);
const ordered = { error: 'fromMs must be before toMs', path: ['fromMs'] };

export const historySchemas = {
  getHistory: z
    .strictObject({ deploymentId: id, keys, fromMs: time, toMs: time, points })
    .refine((q) => q.fromMs < q.toMs, ordered),
  getHistoryBatch: z
    .strictObject({
      deploymentId: id,
      fromMs: time,
      toMs: time,
      groups: z.array(z.strictObject({ keys, points })).min(1).max(64),
    })
    .refine((q) => q.fromMs < q.toMs, ordered)
    .refine(...batchKeysBound),
} satisfies { [K in keyof HistoryRequests]: z.ZodType<Args<K>> };
