// The certificate authorities an https request is verified against: the system's (what the operator's browser
// and curl trust) with Node's bundled Mozilla list, plus a CA file the operator names for a private CA. Setting
// Node's `ca` replaces its default list, so the set is built here, once per process plus once per CA file.
import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import tls from 'node:tls';

/** What a TLS connection is verified against; `caFile` is named in refusals so the operator knows what was used. */
export interface TrustStore {
  ca: string[];
  caFile?: string;
  /** Tells connections verified against different sets apart in an agent's pool. */
  id: string;
}

/**
 * Where Linux distributions keep the system bundle (the list Go's crypto/x509 reads), for runtimes without
 * tls.getCACertificates('system') (Node < 22.15). SSL_CERT_FILE first, as OpenSSL does.
 */
const LINUX_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/ssl/ca-bundle.pem',
  '/etc/pki/tls/cacert.pem',
  '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem',
  '/etc/ssl/cert.pem',
];

/** A CA file larger than this is not a list of CAs. */
const MAX_CA_FILE_BYTES = 4 * 1024 * 1024;

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

let system: TrustStore | undefined;

function systemCertificates(): string[] {
  const get = (tls as { getCACertificates?: (type: 'system') => string[] }).getCACertificates;
  if (get) return get('system');
  const files = [process.env.SSL_CERT_FILE, ...LINUX_BUNDLES].filter((f): f is string => !!f);
  for (const f of files) {
    try {
      const pem = readFileSync(f, 'utf8').match(PEM_BLOCK);
      if (pem?.length) return pem;
    } catch {
      // Not this distribution's path; the next one is tried, and Node's bundled list applies regardless.
    }
  }
  return [];
}

/** The system's CAs and Node's bundled list. */
export function systemTrust(): TrustStore {
  system ??= { ca: [...new Set([...tls.rootCertificates, ...systemCertificates()])], id: 'system' };
  return system;
}

/** Why a CA file cannot be used, worded for the operator (names the file and what to change). */
export class CaFileError extends Error {
  constructor(
    readonly file: string,
    why: string,
  ) {
    super(`the CA file ${file} cannot be used: ${why}`);
    this.name = 'CaFileError';
  }
}

/** The system's CAs plus every certificate of a PEM file; throws CaFileError when the file is not one. */
export function trustWithCaFile(file: string): TrustStore {
  let text: string;
  try {
    const size = statSync(file).size;
    if (size > MAX_CA_FILE_BYTES)
      throw new CaFileError(file, `it is ${size} bytes, more than a list of CA certificates`);
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if (e instanceof CaFileError) throw e;
    throw new CaFileError(file, `${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const blocks = text.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0)
    throw new CaFileError(file, 'it holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  blocks.forEach((pem, i) => {
    try {
      new X509Certificate(pem);
    } catch (e) {
      throw new CaFileError(file, `certificate ${i + 1} does not parse (${(e as Error).message})`);
    }
  });
  return { ca: [...systemTrust().ca, ...blocks], caFile: file, id: `file:${file}` };
}
