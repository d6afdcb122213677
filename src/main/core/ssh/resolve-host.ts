// Resolves a configured host to ssh2 connect options. Being replaced by the full OpenSSH-compatible
// resolver (ssh config, agent, keys, known_hosts, ProxyJump); until then plain SSH hosts are refused
// rather than connected without host-key verification.
import type { ConnectConfig } from 'ssh2';
import type { HostConfig } from '@shared/domain';
import { ApiError } from '../api-error';

export async function resolveSshHost(host: HostConfig): Promise<ConnectConfig> {
  throw new ApiError(
    'unsupported',
    `cannot connect to ${host.label}: host-key verification is not available in this build`,
    'Use the demo deployment.',
  );
}
