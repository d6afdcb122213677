// How a test's app reaches a demo host over real SSH: its address, user and key, and its host key pinned.
import type { ConnectConfig } from 'ssh2';
import type { DemoHost } from '../../src/main/demo';

export function demoConnectConfig(d: DemoHost): ConnectConfig {
  return {
    host: d.host,
    port: d.port,
    username: d.username,
    privateKey: d.clientPrivateKey,
    hostVerifier: (key: Buffer, verify: (ok: boolean) => void) => verify(key.equals(d.hostKeyPublic)),
  };
}
