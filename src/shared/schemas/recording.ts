import { z } from 'zod';
import type { RecordingRequests } from '../api/recording';
import { empty, time } from './common';
import { isPlainLine, PLAIN_LINE_MESSAGE } from '../display-text';

type Args<K extends keyof RecordingRequests> = Parameters<RecordingRequests[K]>[0];

/** Retention by total size: at least 16 MiB, at most 32 TiB. */
export const retentionBytes = z
  .number()
  .int()
  .min(16 * 1024 * 1024)
  .max(2 ** 45);

const sessionId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/);

export const recordingSchemas = {
  getRecordingStatus: empty,
  setRecordingSettings: z.strictObject({
    enabled: z.boolean().optional(),
    maxTotalBytes: retentionBytes.optional(),
  }),
  listSessions: empty,
  renameSession: z.strictObject({
    id: sessionId,
    name: z.string().trim().min(1).max(200).refine(isPlainLine, `name ${PLAIN_LINE_MESSAGE}`),
  }),
  annotateSession: z.strictObject({
    id: sessionId,
    ts: time,
    text: z.string().trim().min(1).max(10_000),
  }),
  deleteSession: z.strictObject({ id: sessionId }),
  exportSession: z.strictObject({
    id: sessionId,
    format: z.enum(['csv', 'csv-raw', 'openmetrics', 'bundle']),
    fromMs: time.optional(),
    toMs: time.optional(),
  }),
} satisfies { [K in keyof RecordingRequests]: z.ZodType<Args<K>> };
