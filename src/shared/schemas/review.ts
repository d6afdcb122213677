import { z } from 'zod';
import { MAX_UPLOAD_BYTES, UPLOAD_CHUNK_BYTES, type ReviewRequests } from '../api/review';
import { empty, id, time } from './common';

type Args<K extends keyof ReviewRequests> = Parameters<ReviewRequests[K]>[0];

const sessionId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/);
const uploadId = z.string().regex(/^[a-f0-9]{16,64}$/);

export const reviewSchemas = {
  openSessionReview: z.strictObject({ id: sessionId }),
  openRecentReview: z.strictObject({
    key: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[A-Za-z0-9._:-]+$/),
  }),
  listRecentReviews: empty,
  setReviewCursor: z.strictObject({ deploymentId: id, ts: time }),
  beginRecordingUpload: z.strictObject({
    name: z.string().trim().min(1).max(255),
    sizeBytes: z.number().int().min(1).max(MAX_UPLOAD_BYTES),
  }),
  uploadRecordingChunk: z.strictObject({
    uploadId,
    offset: z.number().int().min(0).max(MAX_UPLOAD_BYTES),
    data: z
      .string()
      .min(1)
      .max(Math.ceil(UPLOAD_CHUNK_BYTES / 3) * 4)
      .regex(/^[A-Za-z0-9+/]+={0,2}$/),
  }),
  finishRecordingUpload: z.strictObject({ uploadId }),
  cancelRecordingUpload: z.strictObject({ uploadId }),
  resaveSession: z.strictObject({ id: sessionId }),
} satisfies { [K in keyof ReviewRequests]: z.ZodType<Args<K>> };
