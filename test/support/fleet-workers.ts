// The demo fleet's workers as the verdict and the alerts know them: a router and two prefill workers on gpu-a,
// two decode workers on gpu-b, and decode-2 spanning gpu-b (node rank 0) and gpu-c (rank 1), each with the URL
// the router lists it by.
import type { FleetWorker } from '@shared/worker-names';

export const DEMO_FLEET_WORKERS: FleetWorker[] = [
  { id: 'router', role: 'router', hosts: ['gpu-a'] },
  { id: 'prefill-0', role: 'prefill', hosts: ['gpu-a'], url: 'http://127.0.0.2:30100' },
  { id: 'prefill-1', role: 'prefill', hosts: ['gpu-a'], url: 'http://127.0.0.2:30101' },
  { id: 'decode-0', role: 'decode', hosts: ['gpu-b'], url: 'http://127.0.0.3:30200' },
  { id: 'decode-1', role: 'decode', hosts: ['gpu-b'], url: 'http://127.0.0.3:30201' },
  { id: 'decode-2', role: 'decode', hosts: ['gpu-b', 'gpu-c'], url: 'http://127.0.0.3:30202' },
];
