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

export const historySchemas = {
  getHistory: z
    .strictObject({
      deploymentId: id,
      keys: z.array(signalKey).min(1).max(64),
      fromMs: time,
      toMs: time,
      points: z.number().int().min(2).max(11_000),
    })
    .refine((q) => q.fromMs < q.toMs, { error: 'fromMs must be before toMs', path: ['fromMs'] }),
} satisfies { [K in keyof HistoryRequests]: z.ZodType<Args<K>> };
