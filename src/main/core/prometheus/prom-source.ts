// A Prometheus URL as the operator gives it (the panel, `history --prometheus`), made into what the client uses:
// the base URL without a user and password — those, when the URL carries them, move to the secret store as basic
// auth for that exact scheme, host and port, with a warning that says so — the auth's secret saved under the
// same origin, and the CA file checked. One function for the app's API and the CLI, so neither ever shows,
// logs or answers a URL that still holds a password.
import type { PrometheusAuthArgs } from '@shared/api/prometheus';
import { ApiError } from '../api-error';
import type { SecretStore } from '../ssh/prompts';
import { CaFileError, trustWithCaFile } from '../ssh/trust-store';
import { promSecretKey, type PromAuth } from './http-client';

export interface PromSourceInput {
  url: string;
  auth?: PrometheusAuthArgs;
  caFile?: string;
}

export interface PromSource {
  /** Base URL, scheme://host[:port][/prefix], without user, password or trailing slash. */
  url: string;
  auth?: PromAuth;
  caFile?: string;
  /** What was done with the URL that the operator should know (credentials moved, a CA file not needed). */
  warnings: string[];
}

/** A URL that cannot be used; the message never holds the URL's user or password. */
export class PromSourceError extends ApiError {
  constructor(message: string, hint: string) {
    super('bad-prometheus-source', message, hint);
    this.name = 'PromSourceError';
  }
}

/** Userinfo as typed (percent-decoded), or as it stands when its escapes do not decode. */
function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** The text as shown in a message: anything between `//` and `@` is a user and password, and is masked. */
function shown(raw: string): string {
  const one = raw.replace(/\/\/[^/?#]*@/, '//…@');
  return JSON.stringify(one.length > 200 ? `${one.slice(0, 200)}…` : one);
}

/**
 * Checks and normalises a Prometheus URL, moves its userinfo to `secrets` as basic auth (or refuses it), saves
 * `input.auth`'s secret under the URL's origin, and checks the CA file. Throws PromSourceError.
 */
export async function preparePromSource(input: PromSourceInput, secrets: SecretStore): Promise<PromSource> {
  let u: URL;
  try {
    u = new URL(input.url.trim());
  } catch {
    throw new PromSourceError(
      `the Prometheus URL ${shown(input.url)} is not a URL`,
      'Give its base URL, e.g. http://127.0.0.1:9090 or https://prometheus.example.com.',
    );
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new PromSourceError(
      `the Prometheus URL ${shown(input.url)} is not http or https`,
      'Give its base URL, e.g. http://127.0.0.1:9090 or https://prometheus.example.com.',
    );
  if (u.search || u.hash)
    throw new PromSourceError(
      `the Prometheus URL ${shown(input.url)} has a query string or fragment`,
      'Give its base URL only (with the --web.route-prefix path, if any).',
    );
  const warnings: string[] = [];
  let auth = input.auth;
  if (u.username || u.password) {
    const user = decoded(u.username);
    const password = decoded(u.password);
    u.username = '';
    u.password = '';
    if (input.auth)
      throw new PromSourceError(
        `the Prometheus URL ${shown(input.url)} carries a user and password, and credentials were given too`,
        'Give the credentials once: in the auth fields (or the URL alone), not both.',
      );
    if (!user || !password)
      throw new PromSourceError(
        `the Prometheus URL ${shown(input.url)} carries a user without a password (or a password without a user)`,
        'Give the URL without "user@" and the user and password as basic auth.',
      );
    auth = { kind: 'basic', user, password };
    warnings.push(
      `the user and password in the URL were moved to the secret store as basic auth for ${u.origin} only (user ${user}); the URL is used without them`,
    );
  }
  const url = `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
  let promAuth: PromAuth | undefined;
  if (auth) {
    promAuth = auth.kind === 'basic' ? { kind: 'basic', user: auth.user } : { kind: 'bearer' };
    await secrets.set(promSecretKey(url, promAuth), auth.kind === 'basic' ? auth.password : auth.token);
  }
  const caFile = input.caFile?.trim() || undefined;
  if (caFile) {
    if (u.protocol !== 'https:')
      warnings.push(`the CA file ${caFile} is not used: ${u.origin} is plain http, without TLS`);
    try {
      trustWithCaFile(caFile);
    } catch (e) {
      if (!(e instanceof CaFileError)) throw e;
      throw new PromSourceError(
        e.message,
        'Name the PEM file of the CA that signed the Prometheus certificate (a path on this computer).',
      );
    }
  }
  return {
    url,
    ...(promAuth ? { auth: promAuth } : {}),
    ...(caFile ? { caFile } : {}),
    warnings,
  };
}
