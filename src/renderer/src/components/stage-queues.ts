// The PD stage queues of a role and their short names, as the service card and a fleet's role group show them
// beside the scheduler's own `queued`: a prefill worker with nothing queued may still hold requests waiting
// for decode to accept them (bootstrap), and reading "0 queued" there sent the operator the wrong way.
import { QUEUE_SIGNALS, type ServerRole } from '@shared/signals/spec';

/** The PD stage queues (the scheduler's own `queued` is shown with running): a new one needs its label here. */
export type StageQueue = Exclude<(typeof QUEUE_SIGNALS)[ServerRole][number], 'queued'>;

export const QUEUE_LABEL: Record<StageQueue, string> = {
  prefill_bootstrap_queue: 'bootstrap',
  prefill_inflight_queue: 'inflight',
  decode_prealloc_queue: 'prealloc',
  decode_transfer_queue: 'transfer',
};

/** What a request in each queue waits for, for a tooltip. */
export const QUEUE_MEANING: Record<StageQueue, string> = {
  prefill_bootstrap_queue: 'waiting for decode to accept them',
  prefill_inflight_queue: 'prefilled, their KV being sent to decode',
  decode_prealloc_queue: 'waiting for free KV slots on decode',
  decode_transfer_queue: 'waiting for their KV to arrive from prefill',
};

export const stageQueues = (role: ServerRole): StageQueue[] =>
  QUEUE_SIGNALS[role].filter((q): q is StageQueue => q !== 'queued');
