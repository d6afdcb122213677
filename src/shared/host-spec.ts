// "gpu-box" (an ssh alias) or "user@host[:port]" → a HostConfig, for the start page's connect box and the
// CLI's --host. One grammar for both, strict enough that nothing odd reaches the SSH layer.
import type { HostConfig } from './domain';

const HOST_SPEC = /^(?:([A-Za-z0-9._-]+)@)?([A-Za-z0-9._-]+|\[[0-9a-fA-F:]+\])(?::(\d{1,5}))?$/;

export const HOST_SPEC_HELP = 'an ssh alias from ~/.ssh/config (e.g. gpu-box) or user@host[:port]';

/** The host, or null when the text is neither an alias nor user@host[:port]. */
export function parseHostSpec(input: string): HostConfig | null {
  const v = input.trim();
  const m = HOST_SPEC.exec(v);
  if (!m) return null;
  const [, user, hostname, port] = m;
  if (!user && !port) return { id: hostname, label: hostname, kind: 'ssh', alias: hostname };
  return {
    id: v.replace(/[^A-Za-z0-9._@:-]/g, '_'),
    label: v,
    kind: 'ssh',
    hostname,
    user,
    port: port ? Number(port) : undefined,
  };
}
