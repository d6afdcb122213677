import { z } from 'zod';
import type { HistoryRequests } from '../api/history';
import { isScopedSignalKey } from '../signals/is-signal-key';
import type { ScopedKey } from '../signals/scoped-key';
import { id } from './common';

type Args<K extends keyof HistoryRequests> = Parameters<HistoryRequests[K]>[0];

const signalKey = z.custom<ScopedKey>((v) => typeof v === 'string' && isScopedSignalKey(v), {
  error: (iss) =>
    `${JSON.stringify(iss.input)} is not a signal key: keys read <role>.<signal> (decode.kv_ratio, ` +
    'router.router_requests_per_s) as listed in src/shared/signals/spec.ts, optionally scoped after an @',
});
const time = z.number().finite();

const keys = z.array(signalKey).min(1).max(64);
const points = z.number().int().min(2).max(11_000);
/** As getSeriesBatch: a page's charts, not a scan of every key. */
const MAX_BATCH_KEYS = 512;
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
    .refine((q) => q.groups.reduce((n, g) => n + g.keys.length, 0) <= MAX_BATCH_KEYS, {
      error: `a history batch may name at most ${MAX_BATCH_KEYS} keys in all; split it`,
      path: ['groups'],
    }),
} satisfies { [K in keyof HistoryRequests]: z.ZodType<Args<K>> };
