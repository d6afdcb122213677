// Building blocks for argument schemas.
import { z } from 'zod';
import { ROLES } from '../domain';
import { isScopedSignalKey } from '../signals/is-signal-key';
import type { ScopedKey } from '../signals/scoped-key';

export const id = z.string().min(1).max(200);
export const role = z.enum(ROLES);
export const empty = z.strictObject({});
export const time = z.number().finite();

export const signalKey = z.custom<ScopedKey>((v) => typeof v === 'string' && isScopedSignalKey(v), {
  error: (iss) =>
    `${JSON.stringify(iss.input)} is not a signal key: keys read <role>.<signal> (decode.kv_ratio, ` +
    'router.router_requests_per_s, gpu.0.util) as listed in src/shared/signals/spec.ts, optionally scoped ' +
    'to a fleet worker or host after an @ (decode.kv_ratio@decode-1, gpu.3.util@gpu-b)',
});
/** One chart's keys. */
export const keyList = z.array(signalKey).min(1).max(64);

/** A page of the console shows up to ~30 charts; more keys than this in one request is not a page. */
const MAX_BATCH_KEYS = 512;
/** A batch (getSeriesBatch, getHistoryBatch) names at most MAX_BATCH_KEYS keys over its groups: `.refine(...)`. */
export const batchKeysBound: [
  (q: { groups: { keys: readonly unknown[] }[] }) => boolean,
  { error: string; path: string[] },
] = [
  (q) => q.groups.reduce((n, g) => n + g.keys.length, 0) <= MAX_BATCH_KEYS,
  { error: `a history batch may name at most ${MAX_BATCH_KEYS} keys in all; split it`, path: ['groups'] },
];

/** Who asked for an action, as the timeline records it. */
export const requestedBy = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._@ -]+$/)
  .optional();
