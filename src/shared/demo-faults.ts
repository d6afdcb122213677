// The failures the demo host can simulate, by name. Shared so the API schema, the command palette and the
// demo simulation agree on one list: a fault the demo does not know is refused at the boundary.
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
