// OpenSSH known_hosts, read the way sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT" describes: optional @revoked /
// @cert-authority marker, comma-separated host patterns (wildcards, !negation, [host]:port), or a hashed
// |1|salt|hmac field, then key type and base64 key. A line that does not parse is a warning naming file:line
// and the rest of the file is still used; a file that exists but cannot be read fails closed.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { commaListMatch } from './patterns';

export interface KnownHostEntry {
  file: string;
  line: number;
  marker: 'revoked' | 'cert-authority' | null;
  /** The host field as written (patterns, or the |1| hashed form). */
  hosts: string;
  hashed: { salt: Buffer; hash: Buffer } | null;
  keyType: string;
  key: Buffer;
}

export interface KnownHostsWarning {
  file: string;
  line: number;
  message: string;
}

export interface KnownHostsData {
  entries: KnownHostEntry[];
  warnings: KnownHostsWarning[];
  /** Files that existed and were read. */
  files: string[];
}

export class KnownHostsUnreadable extends Error {
  constructor(
    readonly file: string,
    cause: string,
  ) {
    super(`cannot read known_hosts file ${file}: ${cause}`);
    this.name = 'KnownHostsUnreadable';
  }
}

/** Big enough for tens of thousands of hosts; a larger file is refused rather than read without bound. */
const MAX_KNOWN_HOSTS_BYTES = 32 * 1024 * 1024;

export function parseKnownHosts(
  text: string,
  file: string,
): { entries: KnownHostEntry[]; warnings: KnownHostsWarning[] } {
  const entries: KnownHostEntry[] = [];
  const warnings: KnownHostsWarning[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].replace(/\r$/, '');
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const r = parseLine(trimmed);
    if (typeof r === 'string')
      warnings.push({ file, line: i + 1, message: `${file}:${i + 1}: ${r}; line ignored` });
    else entries.push({ ...r, file, line: i + 1 });
  }
  return { entries, warnings };
}

function parseLine(text: string): Omit<KnownHostEntry, 'file' | 'line'> | string {
  const fields = text.split(/[ \t]+/);
  let marker: KnownHostEntry['marker'] = null;
  if (fields[0].startsWith('@')) {
    const m = fields.shift()!.toLowerCase();
    if (m === '@revoked') marker = 'revoked';
    else if (m === '@cert-authority') marker = 'cert-authority';
    else return `unknown marker "${m.slice(0, 40)}"`;
  }
  if (fields.length < 3) return 'expected "hosts keytype base64-key"';
  const [hosts, keyType, b64] = fields;
  if (!/^[A-Za-z0-9@._+-]{1,100}$/.test(keyType)) return `"${keyType.slice(0, 40)}" is not a key type`;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return 'the key is not base64';
  const key = Buffer.from(b64, 'base64');
  const blobType = keyTypeOfBlob(key);
  if (blobType === null) return 'the key data is truncated or malformed';
  if (blobType !== keyType) return `key type field says ${keyType} but the key is ${blobType}`;
  let hashed: KnownHostEntry['hashed'] = null;
  if (hosts.startsWith('|')) {
    const m = /^\|1\|([A-Za-z0-9+/]+=*)\|([A-Za-z0-9+/]+=*)$/.exec(hosts);
    if (!m) return 'hashed host field is not |1|salt|hash';
    const salt = Buffer.from(m[1], 'base64');
    const hash = Buffer.from(m[2], 'base64');
    if (salt.length !== 20 || hash.length !== 20)
      return 'hashed host field has a salt or hash of the wrong length';
    hashed = { salt, hash };
  }
  return { marker, hosts, hashed, keyType, key };
}

/** The type name an SSH public key blob starts with (uint32 length + ASCII), or null when malformed. */
export function keyTypeOfBlob(blob: Buffer): string | null {
  if (blob.length < 4) return null;
  const len = blob.readUInt32BE(0);
  if (len < 1 || len > 64 || 4 + len > blob.length) return null;
  const type = blob.subarray(4, 4 + len).toString('latin1');
  return /^[A-Za-z0-9@._+-]+$/.test(type) ? type : null;
}

/** The name known_hosts records a host under: `host` on port 22, `[host]:port` otherwise (lowercased, like ssh). */
export function knownHostsName(host: string, port: number): string {
  const h = host.toLowerCase();
  return port === 22 ? h : `[${h}]:${port}`;
}

export function entryMatches(entry: KnownHostEntry, name: string): boolean {
  if (entry.hashed) {
    const mac = createHmac('sha1', entry.hashed.salt).update(name).digest();
    return timingSafeEqual(mac, entry.hashed.hash);
  }
  return commaListMatch(name, entry.hosts);
}

/** `SHA256:` + unpadded base64 of the key blob's SHA-256, as `ssh-keygen -lf` prints it. */
export function fingerprintSha256(blob: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
}

/** How `ssh-keygen -lf` names a key type: ED25519, RSA, ECDSA… */
export function keyTypeLabel(keyType: string): string {
  if (keyType === 'ssh-ed25519') return 'ED25519';
  if (keyType === 'ssh-rsa') return 'RSA';
  if (keyType === 'ssh-dss') return 'DSA';
  if (keyType.startsWith('ecdsa-')) return 'ECDSA';
  if (keyType.startsWith('sk-ssh-ed25519')) return 'ED25519-SK';
  if (keyType.startsWith('sk-ecdsa')) return 'ECDSA-SK';
  return keyType;
}

export async function loadKnownHosts(files: readonly string[]): Promise<KnownHostsData> {
  const data: KnownHostsData = { entries: [], warnings: [], files: [] };
  for (const file of files) {
    let text: string;
    try {
      const st = await fs.stat(file);
      if (st.isDirectory()) throw new KnownHostsUnreadable(file, 'it is a directory');
      if (st.size > MAX_KNOWN_HOSTS_BYTES)
        throw new KnownHostsUnreadable(file, `it is ${st.size} bytes (limit ${MAX_KNOWN_HOSTS_BYTES})`);
      text = await fs.readFile(file, 'utf8');
    } catch (err) {
      if (err instanceof KnownHostsUnreadable) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      throw new KnownHostsUnreadable(file, (err as Error).message);
    }
    const parsed = parseKnownHosts(text, file);
    data.entries.push(...parsed.entries);
    data.warnings.push(...parsed.warnings);
    data.files.push(file);
  }
  return data;
}

export type HostKeyStatus =
  | { status: 'ok'; entry: KnownHostEntry }
  | { status: 'revoked'; entry: KnownHostEntry }
  | { status: 'changed'; entries: KnownHostEntry[] }
  | { status: 'unknown'; otherTypes: KnownHostEntry[] };

/**
 * Checks a presented key against the entries for `name` (from knownHostsName). As in OpenSSH: a revoked key
 * is refused outright, a matching key is accepted, a different key of the same type means the key changed,
 * and keys of other types only mean this type is not yet known. @cert-authority lines are not used: ssh2
 * does not negotiate host certificates.
 */
export function checkHostKey(entries: readonly KnownHostEntry[], name: string, key: Buffer): HostKeyStatus {
  const keyType = keyTypeOfBlob(key) ?? '';
  const forHost = entries.filter((e) => e.marker !== 'cert-authority' && entryMatches(e, name));
  const revoked = forHost.find((e) => e.marker === 'revoked' && e.key.equals(key));
  if (revoked) return { status: 'revoked', entry: revoked };
  const plain = forHost.filter((e) => e.marker === null);
  const ok = plain.find((e) => e.key.equals(key));
  if (ok) return { status: 'ok', entry: ok };
  const sameType = plain.filter((e) => e.keyType === keyType);
  if (sameType.length > 0) return { status: 'changed', entries: sameType };
  return { status: 'unknown', otherTypes: plain };
}

/** Key types already recorded for a host, to prefer them when negotiating (as OpenSSH orders HostKeyAlgorithms). */
export function knownKeyTypes(entries: readonly KnownHostEntry[], name: string): string[] {
  const types = entries.filter((e) => e.marker === null && entryMatches(e, name)).map((e) => e.keyType);
  return [...new Set(types)];
}

export function formatKnownHostsLine(name: string, key: Buffer, hashed: boolean): string {
  const keyType = keyTypeOfBlob(key);
  if (!keyType) throw new Error('refusing to record a malformed host key');
  let hostField = name;
  if (hashed) {
    const salt = randomBytes(20);
    const mac = createHmac('sha1', salt).update(name).digest();
    hostField = `|1|${salt.toString('base64')}|${mac.toString('base64')}`;
  }
  return `${hostField} ${keyType} ${key.toString('base64')}`;
}

/** Appends one line, creating ~/.ssh (0700) and the file (0600) when missing and keeping the file newline-terminated. */
export async function appendKnownHost(file: string, line: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  let prefix = '';
  try {
    const fh = await fs.open(file, 'r');
    try {
      const { size } = await fh.stat();
      if (size > 0) {
        const last = Buffer.alloc(1);
        await fh.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) prefix = '\n';
      }
    } finally {
      await fh.close();
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await fs.appendFile(file, `${prefix}${line}\n`, { mode: 0o600 });
}
