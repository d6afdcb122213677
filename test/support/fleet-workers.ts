// The demo fleet's workers as the verdict and the alerts know them: a router and two prefill workers on gpu-a,
// two decode workers on gpu-b, and decode-2 spanning gpu-b (node rank 0) and gpu-c (rank 1).
import type { FleetWorker } from '../../src/main/core/signals/worker-names';

export const DEMO_FLEET_WORKERS: FleetWorker[] = [
  { id: 'router', role: 'router', hosts: ['gpu-a'] },
  { id: 'prefill-0', role: 'prefill', hosts: ['gpu-a'] },
  { id: 'prefill-1', role: 'prefill', hosts: ['gpu-a'] },
  { id: 'decode-0', role: 'decode', hosts: ['gpu-b'] },
  { id: 'decode-1', role: 'decode', hosts: ['gpu-b'] },
  { id: 'decode-2', role: 'decode', hosts: ['gpu-b', 'gpu-c'] },
];
