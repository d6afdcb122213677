// The sample names review decodes from a recording and keeps in its overview: what the signal evaluator reads,
// and the host series the monitor records (GPU readings, scrape health, /server_info capacity).
import { isSignalInput } from '../signals/evaluate';
import { isHostFamily } from '../recording/host-series';

export function isReviewInput(name: string): boolean {
  return isSignalInput(name) || isHostFamily(name);
}
