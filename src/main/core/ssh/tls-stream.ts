// TLS over a stream an agent opened — an SSH tunnel's direct-tcpip channel or a TCP socket — handed to a request
// only once the server's certificate is verified. The verification is done here with the certificate at hand
// (rather than by Node's rejectUnauthorized, which destroys the socket and keeps only an error code) so a
// refusal says what was presented; nothing is written before it, so a refused server never sees a request.
import { createHash } from 'node:crypto';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import type { TrustStore } from './trust-store';

/** Where a TLS connection goes: the URL's host names the certificate (and the SNI when it is a name). */
export interface TlsTarget {
  host: string;
  port: number;
  trust: TrustStore;
}

/** A TLS handshake that failed or a certificate that was refused; nothing was sent to that server. */
export class TlsError extends Error {
  constructor(
    message: string,
    readonly kind: 'certificate' | 'handshake',
    /** OpenSSL's verify code (UNABLE_TO_GET_ISSUER_CERT_LOCALLY, CERT_HAS_EXPIRED…) or Node's error code. */
    readonly reason: string,
  ) {
    super(message);
    this.name = 'TlsError';
  }
}

/** How long a handshake may take once the stream is open. */
const HANDSHAKE_MS = 15_000;

function names(subject: tls.Certificate | undefined): string {
  if (!subject) return '(none)';
  return Object.entries(subject)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('+') : String(v)}`)
    .join(', ');
}

/** What a server presented, in the words of `openssl x509 -noout -subject -issuer -dates -fingerprint`. */
function presented(cert: tls.PeerCertificate): string {
  if (!cert || !cert.raw) return 'no certificate';
  const sha256 = createHash('sha256')
    .update(cert.raw)
    .digest('hex')
    .toUpperCase()
    .replace(/(..)(?!$)/g, '$1:');
  return [
    `subject ${names(cert.subject)}`,
    ...(cert.subjectaltname ? [`names ${cert.subjectaltname}`] : []),
    `issuer ${names(cert.issuer)}`,
    `valid ${cert.valid_from} to ${cert.valid_to}`,
    `SHA-256 ${sha256}`,
  ].join('; ');
}

function why(reason: string, host: string, trust: TrustStore): string {
  const against = trust.caFile ? `the system's CAs and ${trust.caFile}` : "the system's CAs";
  switch (reason) {
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `its certificate is not for ${host}`;
    case 'CERT_HAS_EXPIRED':
      return 'its certificate has expired';
    case 'CERT_NOT_YET_VALID':
      return 'its certificate is not valid yet (or this computer’s clock is wrong)';
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
      return `its certificate is self-signed and not among ${against}`;
    default:
      return `its certificate is not signed by a CA among ${against}`;
  }
}

/**
 * Starts TLS on `stream` and resolves with the verified socket; rejects with a TlsError (the stream destroyed)
 * when the handshake fails, the certificate does not verify against `target.trust`, or it is not for the host.
 */
export function secureStream(stream: Duplex, target: TlsTarget): Promise<tls.TLSSocket> {
  const where = `${target.host}:${target.port}`;
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      socket: stream,
      host: target.host,
      // RFC 6066 forbids an address as server name: an address URL sends none, and its certificate must list it.
      ...(net.isIP(target.host) ? {} : { servername: target.host }),
      ca: target.trust.ca,
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
      minVersion: 'TLSv1.2',
    });
    let settled = false;
    const settle = (err: TlsError | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.off('error', onError);
      if (err) {
        socket.destroy();
        stream.destroy();
        reject(err);
      } else resolve(socket);
    };
    const onError = (e: NodeJS.ErrnoException): void => {
      const code = e.code ?? 'ERR_TLS';
      const notTls = /WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|UNKNOWN_PROTOCOL|HTTP_REQUEST/.test(code);
      settle(
        new TlsError(
          notTls
            ? `${where} does not speak TLS (its answer to the TLS handshake was not TLS: ${code}); nothing was sent. If it serves plain HTTP, give an http:// URL — the console never falls back to plain HTTP by itself`
            : `the TLS handshake with ${where} failed (${code}: ${e.message}); nothing was sent`,
          'handshake',
          code,
        ),
      );
    };
    socket.on('error', onError);
    socket.once('secureConnect', () => {
      if (socket.authorized) return settle(null);
      const reason = String(socket.authorizationError ?? 'UNKNOWN');
      settle(
        new TlsError(
          `refused ${where}: ${why(reason, target.host, target.trust)} (${reason}); it presented ${presented(socket.getPeerCertificate())}. Nothing was sent to it`,
          'certificate',
          reason,
        ),
      );
    });
    const timer = setTimeout(
      () =>
        settle(
          new TlsError(
            `no TLS handshake with ${where} within ${HANDSHAKE_MS / 1000} s`,
            'handshake',
            'ETIMEDOUT',
          ),
        ),
      HANDSHAKE_MS,
    );
  });
}
