// A throwaway certificate authority for TLS tests, made with the openssl CLI in a temp dir: a CA, a server
// certificate it signs for the given DNS names, and a second CA nobody trusts (to sign an "unknown CA" cert).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const OPENSSL = '/usr/bin/openssl';

export function opensslUnavailableReason(): string | null {
  return existsSync(OPENSSL) ? null : `${OPENSSL} is not installed (apt-get install openssl)`;
}

export interface TestPki {
  dir: string;
  /** PEM file of the CA that signed `server` (what the operator names as CA file). */
  caFile: string;
  /** Key and certificate (for DNS names `names`) signed by the CA. */
  server: { key: string; cert: string };
  /** Key and certificate for the same names, signed by another CA that nobody trusts. */
  stranger: { key: string; cert: string };
  cleanup(): void;
}

function run(dir: string, args: string[]): void {
  execFileSync(OPENSSL, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(dir: string, name: string, cn: string): void {
  run(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    '-subj',
    `/CN=${cn}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

function signLeaf(dir: string, ca: string, name: string, names: string[]): void {
  writeFileSync(
    path.join(dir, `${name}.ext`),
    `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
  );
  run(dir, [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${names[0]}`,
  ]);
  run(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.pem`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
  ]);
}

export function makeTestPki(names: string[]): TestPki {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pd-pki-'));
  makeCa(dir, 'ca', 'PD Console Test CA');
  makeCa(dir, 'other-ca', 'Somebody Else CA');
  signLeaf(dir, 'ca', 'server', names);
  signLeaf(dir, 'other-ca', 'stranger', names);
  const read = (f: string): string => readFileSync(path.join(dir, f), 'utf8');
  return {
    dir,
    caFile: path.join(dir, 'ca.pem'),
    server: { key: read('server.key'), cert: read('server.pem') },
    stranger: { key: read('stranger.key'), cert: read('stranger.pem') },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
