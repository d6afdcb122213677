// Fresh ed25519 keys for each demo host: its host key, and the one client key it accepts.
import { utils, type ParsedKey } from 'ssh2';

export interface DemoKeys {
  /** OpenSSH private key of the host (what ssh2's Server takes in hostKeys). */
  hostPrivateKey: string;
  /** "ssh-ed25519 AAAA…" line of the host key. */
  hostPublicKeyLine: string;
  /** Raw SSH public key blob: what a client's hostVerifier receives. */
  hostKeyPublic: Buffer;
  clientPrivateKey: string;
  /** authorized_keys line of the client key. */
  clientPublicKeyLine: string;
  clientPublic: ParsedKey;
}

function parsed(text: string, what: string): ParsedKey {
  const k = utils.parseKey(text);
  if (k instanceof Error) throw new Error(`demo host: could not parse the generated ${what}: ${k.message}`);
  return Array.isArray(k) ? k[0] : k;
}

export function generateDemoKeys(): DemoKeys {
  const host = utils.generateKeyPairSync('ed25519', { comment: 'demo-host' });
  const client = utils.generateKeyPairSync('ed25519', { comment: 'pd-console-demo' });
  return {
    hostPrivateKey: host.private,
    hostPublicKeyLine: host.public,
    hostKeyPublic: parsed(host.public, 'host key').getPublicSSH(),
    clientPrivateKey: client.private,
    clientPublicKeyLine: client.public,
    clientPublic: parsed(client.public, 'client key'),
  };
}
