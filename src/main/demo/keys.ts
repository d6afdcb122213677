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

/**
 * ssh2's generateKeyPairSync('ed25519') drops a leading zero byte of the public key about once in 250 keys,
 * leaving a 31-byte key that its own parser (and OpenSSH) rejects as malformed. Draw again until it parses.
 */
export function ed25519(
  comment = '',
  encrypt?: { passphrase: string; cipher: string; rounds: number },
): { private: string; public: string } {
  for (let i = 0; ; i++) {
    const pair = encrypt
      ? utils.generateKeyPairSync('ed25519', { comment, ...encrypt })
      : utils.generateKeyPairSync('ed25519', { comment });
    const ok =
      !(utils.parseKey(pair.public) instanceof Error) &&
      !(utils.parseKey(pair.private, encrypt?.passphrase) instanceof Error);
    if (ok || i >= 20) return pair; // after 20 draws, parsed() below (or the caller) reports the failure
  }
}

/** A fresh host key, and a fresh client key unless `client` (one client key for every fleet host) is given. */
export function generateDemoKeys(
  client: { private: string; public: string } = ed25519('pd-console-demo'),
  hostComment = 'demo-host',
): DemoKeys {
  const host = ed25519(hostComment);
  return {
    hostPrivateKey: host.private,
    hostPublicKeyLine: host.public,
    hostKeyPublic: parsed(host.public, 'host key').getPublicSSH(),
    clientPrivateKey: client.private,
    clientPublicKeyLine: client.public,
    clientPublic: parsed(client.public, 'client key'),
  };
}
