// A recording file picked or dropped in the window goes to the core in chunks (browser mode has no file paths,
// and one WebSocket frame is capped at 1 MiB); the core checks it, keeps it in the recordings folder and opens it.
import type { ReviewOpenResult } from '@shared/contract';
import { MAX_UPLOAD_BYTES } from '@shared/api/review';
import { api } from '../api/client';

export const RECORDING_SUFFIX = '.pdrec.jsonl.gz';

function base64(bytes: Uint8Array): string {
  let bin = '';
  const step = 0x8000;
  for (let i = 0; i < bytes.length; i += step)
    bin += String.fromCharCode(...bytes.subarray(i, Math.min(bytes.length, i + step)));
  return btoa(bin);
}

export async function openRecordingFile(
  file: File,
  onProgress: (fraction: number) => void = () => undefined,
): Promise<ReviewOpenResult> {
  if (file.size === 0) throw new Error(`${file.name} is empty: it is not a PD Console recording`);
  if (file.size > MAX_UPLOAD_BYTES)
    throw new Error(
      `${file.name} is ${(file.size / 1024 ** 2).toFixed(0)} MiB; recordings up to ${MAX_UPLOAD_BYTES / 1024 ** 2} MiB can be opened here`,
    );
  const { uploadId, chunkBytes } = await api.beginRecordingUpload({ name: file.name, sizeBytes: file.size });
  try {
    for (let off = 0; off < file.size; off += chunkBytes) {
      const bytes = new Uint8Array(await file.slice(off, off + chunkBytes).arrayBuffer());
      await api.uploadRecordingChunk({ uploadId, offset: off, data: base64(bytes) });
      onProgress(Math.min(1, (off + bytes.length) / file.size));
    }
    return await api.finishRecordingUpload({ uploadId });
  } catch (err) {
    // The core removes the partial file; a failure to cancel changes nothing the operator can act on.
    await api.cancelRecordingUpload({ uploadId }).catch(() => undefined);
    throw err;
  }
}
