// The failures the demo host can simulate, by name. Shared so the API schema, the command palette and the
// demo simulation agree on one list: a fault the demo does not know is refused at the boundary.
import type { Role } from './domain';

export const DEMO_FAULT_NAMES = [
  'sudo-password',
  'unit-fails-to-start',
  'start-timeout',
  'health-never-ok',
  'router-never-readds',
  'crash-loop',
  'metrics-500',
  'metrics-hang',
  'metrics-trickle',
  'metrics-huge',
  'metrics-garbage',
  'malformed-systemctl',
  'malformed-journal',
  'malformed-nvidia-smi',
  'kv-full',
  'foreign-gpu-process',
  'nvidia-smi-missing',
  'link-down',
] as const;

export type DemoFaultName = (typeof DEMO_FAULT_NAMES)[number];

/**
 * The roles each fault can be turned on for (for one worker of them, or all); null: the fault is host-wide (it
 * is turned on for a host).
 */
export const DEMO_FAULT_SCOPES: Record<DemoFaultName, readonly Role[] | null> = {
  'sudo-password': null,
  'unit-fails-to-start': ['prefill', 'decode', 'router'],
  'start-timeout': ['prefill', 'decode'],
  'health-never-ok': ['prefill', 'decode'],
  'router-never-readds': ['prefill', 'decode'],
  'crash-loop': ['prefill', 'decode', 'router'],
  'metrics-500': ['prefill', 'decode', 'router'],
  'metrics-hang': ['prefill', 'decode', 'router'],
  'metrics-trickle': ['prefill', 'decode', 'router'],
  'metrics-huge': ['prefill', 'decode', 'router'],
  'metrics-garbage': ['prefill', 'decode', 'router'],
  'malformed-systemctl': null,
  'malformed-journal': null,
  'malformed-nvidia-smi': null,
  'kv-full': ['decode'],
  // Someone else's job on a worker's GPUs: stopping the worker would free nothing.
  'foreign-gpu-process': ['prefill', 'decode'],
  // nvidia-smi not on the SSH user's PATH: no GPU reading can be made on the host.
  'nvidia-smi-missing': null,
  // The network path to the host is blackholed: its SSH server stops answering (the units keep running).
  'link-down': null,
};

/** The longest a fault can be turned on for at once (a duration is for "drop the link for 90 s"). */
export const MAX_DEMO_FAULT_MS = 3_600_000;

/** A fault that is on, for one target. */
export interface DemoFaultState {
  fault: DemoFaultName;
  /** What it is on for: a host (host-wide faults), a worker ("decode-1"; a role on the single host), or "router". */
  target: string;
  /** When it turns off by itself (the demo's clock, epoch ms); null: until someone turns it off. */
  until: number | null;
}
