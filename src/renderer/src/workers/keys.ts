// A fleet's per-worker and per-host series keys for the charts. The history request takes scoped keys
// (`decode.kv_ratio@decode-1`, checked by isScopedSignalKey on the receiving side); the chart's series type
// names the spec key, which is what labels, units and "not exposed" messages are looked up by.
import { scopedKey } from '@shared/signals/scoped-key';
import type { SignalKey } from '@shared/signals/spec';

export function workerKey(key: SignalKey, scope: string): SignalKey {
  return scopedKey(key, scope) as SignalKey;
}

/** Colours for one line per worker: the theme's own first, so lines stay readable in both themes. */
export const WORKER_COLORS = [
  '--decode',
  '--prefill',
  '--router',
  '--accent',
  '--ok',
  '--warn',
  '--bad',
  '--muted',
];
