// PromApi over the app's bounded HTTP: through a host link's SSH tunnel (its ForwardingAgent) or a plain agent
// for a URL the laptop reaches directly. A small typed client rather than the `prometheus-query` package: that
// one sends through axios/fetch with its own transport, so it could neither ride the ssh2 direct-tcpip agent nor
// keep the app's size cap and real-time timeout, and it throws its own error shapes that would still need
// translating into what the operator should change. The HTTP API is five GETs and one POST. An https URL is
// spoken to in TLS (through the tunnel too), verified against the system's CAs and the operator's CA file; the
// answer is read as it arrives and bounded in series and points (answer-reader.ts); credentials go only to the
// scheme, host and port they were given for.
import type http from 'node:http';
import { z } from 'zod';
import { boundedRequest, DirectAgent, HttpError, type BoundedResponse } from '../ssh/http-agent';
import type { SecretStore } from '../ssh/prompts';
import { CaFileError, systemTrust, trustWithCaFile, type TrustStore } from '../ssh/trust-store';
import {
  AnswerLimitError,
  AnswerReader,
  AnswerShapeError,
  promNumber,
  type ReadAnswer,
} from './answer-reader';
import type { PromApi, PromFailure, PromRangeResult, PromRangeSeries, PromTarget } from './prom-api';

/** Credentials in front of a Prometheus (web.config.yml basic_auth_users, or a proxy that wants a bearer token). */
export type PromAuth = { kind: 'basic'; user: string } | { kind: 'bearer' };

/**
 * The SecretStore key of a Prometheus password or token: bound to the scheme, host and port it was given for
 * (the URL's origin), so it is never looked up — nor sent — for another, not even the same host in plain http.
 */
export function promSecretKey(baseUrl: string, auth: PromAuth): string {
  const origin = new URL(baseUrl).origin;
  return auth.kind === 'basic' ? `prometheus-basic:${auth.user}@${origin}` : `prometheus-bearer:${origin}`;
}

export interface PromHttpClientOptions {
  /** Base URL as Prometheus serves it, path prefix included (`--web.route-prefix`), e.g. http://127.0.0.1:9090. */
  baseUrl: string;
  label: string;
  /**
   * The agent of each request: a host link's ForwardingAgent (a getter, because a reconnect replaces it) or
   * absent for a direct URL, when the client owns a keep-alive agent and destroys it on dispose.
   */
  agent?: () => http.Agent;
  auth?: PromAuth;
  secrets?: SecretStore;
  /** PEM file of the CA that signed an https Prometheus' certificate, trusted besides the system's CAs. */
  caFile?: string;
  timeoutMs?: number;
  maxBytes?: number;
  /** Series one answer may hold; more is refused. */
  maxSeries?: number;
  /** Points one answer may hold (after one per step of a range query's grid); more is refused. */
  maxPoints?: number;
}

/** The app's queries aggregate to a few series; an answer with more than this is refused, not drawn. */
export const MAX_SERIES_PER_ANSWER = 1_000;
/** About 50 MB of points; a chart asks for ~1,000 per series. */
export const MAX_POINTS_PER_ANSWER = 1_000_000;
/** Redirects followed within the Prometheus' own origin (a proxy's path rewrite); another origin is refused. */
const MAX_REDIRECTS = 3;

/** Thrown by every PromApi method: `failure` says what failed, on which query, and what to change. */
export class PromRequestError extends Error {
  constructor(readonly failure: PromFailure) {
    super(failure.fix ? `${failure.message} — ${failure.fix}` : failure.message);
    this.name = 'PromRequestError';
  }
}

/** Prometheus refuses range queries with more points per series than this (web/api/v1/api.go). */
export const MAX_POINTS_PER_SERIES = 11_000;

/** The smallest step Prometheus accepts for a range, in whole seconds. */
export function minStepS(startS: number, endS: number): number {
  return Math.max(1, Math.ceil((endS - startS) / MAX_POINTS_PER_SERIES));
}

const envelope = z.object({
  status: z.enum(['success', 'error']),
  data: z.unknown().optional(),
  errorType: z.string().optional(),
  error: z.string().optional(),
  warnings: z.array(z.string()).optional(),
  infos: z.array(z.string()).optional(),
});

const targetsData = z.object({
  activeTargets: z.array(
    z.object({
      labels: z.record(z.string(), z.string()),
      discoveredLabels: z.record(z.string(), z.string()).optional(),
      scrapePool: z.string().optional(),
      scrapeUrl: z.string(),
      health: z.string(),
      lastError: z.string().optional(),
      lastScrape: z.string().optional(),
      scrapeInterval: z.string().optional(),
    }),
  ),
});

const configData = z.object({ yaml: z.string() });
const flagsData = z.record(z.string(), z.string());

/** Prometheus durations as it prints them: `15s`, `1m30s`, `15d`, `2w`, `1y`, `500ms`. */
export function parsePromDurationS(text: string): number | null {
  const units: Record<string, number> = {
    y: 365 * 86400,
    w: 7 * 86400,
    d: 86400,
    h: 3600,
    m: 60,
    s: 1,
    ms: 0.001,
  };
  const re = /(\d+(?:\.\d+)?)(ms|y|w|d|h|m|s)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * units[m[2]!]!;
    matched = re.lastIndex;
  }
  return matched > 0 && matched === text.length ? total : null;
}

export class PromHttpClient implements PromApi {
  readonly label: string;
  private readonly baseUrl: string;
  private readonly origin: string;
  private readonly ownAgent: http.Agent | null;
  private readonly agentOf: () => http.Agent;
  private trust: TrustStore | undefined;

  constructor(private readonly opts: PromHttpClientOptions) {
    this.label = opts.label;
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.origin = new URL(this.baseUrl).origin;
    if (opts.agent) {
      this.ownAgent = null;
      this.agentOf = opts.agent;
    } else {
      const own = new DirectAgent({ keepAlive: true, maxSockets: 4 });
      this.ownAgent = own;
      this.agentOf = () => own;
    }
  }

  async queryRange(
    expr: string,
    startS: number,
    endS: number,
    stepS: number,
    signal?: AbortSignal,
  ): Promise<PromRangeResult> {
    const form = new URLSearchParams({
      query: expr,
      start: String(startS),
      end: String(endS),
      step: String(stepS),
    });
    const ctx: Ctx = { what: `query_range ${expr}`, query: expr, startS, endS, stepS };
    const grid = { startS, endS, stepS };
    const { answer, warnings, bytes } = await this.call(
      'POST',
      '/api/v1/query_range',
      form,
      ctx,
      signal,
      grid,
    );
    return { series: this.series(answer, ctx), bytes, warnings: [...warnings, ...answer.notes] };
  }

  async query(expr: string, timeS?: number, signal?: AbortSignal): Promise<PromRangeResult> {
    const form = new URLSearchParams({
      query: expr,
      ...(timeS === undefined ? {} : { time: String(timeS) }),
    });
    const ctx: Ctx = { what: `query ${expr}`, query: expr };
    const { answer, warnings, bytes } = await this.call('POST', '/api/v1/query', form, ctx, signal, null);
    return { series: this.series(answer, ctx), bytes, warnings: [...warnings, ...answer.notes] };
  }

  async targets(signal?: AbortSignal): Promise<PromTarget[]> {
    const ctx: Ctx = { what: '/api/v1/targets' };
    const { answer } = await this.call('GET', '/api/v1/targets?state=active', null, ctx, signal, 'whole');
    const data = answer.data;
    const parsed = targetsData.safeParse(data);
    if (!parsed.success) throw this.garbage(ctx, 'the targets list is not in the /api/v1/targets shape');
    return parsed.data.activeTargets.map((t) => ({
      job: t.labels.job ?? t.scrapePool ?? '',
      instance: t.labels.instance ?? '',
      scrapeUrl: t.scrapeUrl,
      health: t.health === 'up' || t.health === 'down' ? t.health : 'unknown',
      lastError: t.lastError ?? '',
      lastScrape: t.lastScrape ?? '',
      scrapeIntervalS: t.scrapeInterval ? parsePromDurationS(t.scrapeInterval) : null,
      labels: t.labels,
      ...(t.discoveredLabels ? { discoveredLabels: t.discoveredLabels } : {}),
    }));
  }

  async configYaml(signal?: AbortSignal): Promise<string> {
    const ctx: Ctx = { what: '/api/v1/status/config' };
    const { answer } = await this.call('GET', '/api/v1/status/config', null, ctx, signal, 'whole');
    const data = answer.data;
    const parsed = configData.safeParse(data);
    if (!parsed.success) throw this.garbage(ctx, 'the answer has no `yaml` field');
    return parsed.data.yaml;
  }

  async retentionS(signal?: AbortSignal): Promise<number | null> {
    const ctx: Ctx = { what: '/api/v1/status/flags' };
    const { answer } = await this.call('GET', '/api/v1/status/flags', null, ctx, signal, 'whole');
    const data = answer.data;
    const parsed = flagsData.safeParse(data);
    if (!parsed.success) throw this.garbage(ctx, 'the flags are not a name → value map');
    // VictoriaMetrics has no such flag (it answers retentionPeriod elsewhere): unknown, not an error.
    const value = parsed.data['storage.tsdb.retention.time'] ?? parsed.data['storage.tsdb.retention'];
    if (!value || value === '0s') return null;
    return parsePromDurationS(value);
  }

  dispose(): void {
    this.ownAgent?.destroy();
  }

  private series(answer: ReadAnswer, ctx: Ctx): PromRangeSeries[] {
    switch (answer.resultType) {
      case 'matrix':
      case 'vector': {
        const want = answer.resultType === 'matrix' ? 'values' : 'value';
        if (answer.seriesKind !== null && answer.seriesKind !== want)
          throw this.garbage(
            ctx,
            `its ${answer.resultType} holds series that are not in the ${answer.resultType} shape`,
          );
        // An empty result must be an empty list: anything else there is not the API's answer.
        if (answer.series.length === 0 && !this.emptyResult(answer))
          throw this.garbage(ctx, `the result is not a Prometheus ${answer.resultType}`);
        return answer.series;
      }
      case 'scalar': {
        // A scalar is one [time, "value"] pair: a few dozen bytes, read from the kept head of the body.
        const parsed = answer.complete ? scalarData.safeParse(safeJson(answer.head)) : null;
        if (!parsed?.success) throw this.garbage(ctx, 'the scalar is not a [time, "value"] pair');
        const [t, text] = parsed.data.data.result;
        const v = promNumber(text);
        return [{ metric: {}, values: v === null ? [] : [[t, v]] }];
      }
      case 'string':
        throw this.garbage(ctx, 'the query returned a string, not numbers');
      default:
        throw this.garbage(ctx, 'the result is not a Prometheus matrix, vector or scalar');
    }
  }

  private emptyResult(answer: ReadAnswer): boolean {
    if (!answer.complete) return false;
    const r = (safeJson(answer.head) as { data?: { result?: unknown } } | undefined)?.data?.result;
    return Array.isArray(r) && r.length === 0;
  }

  /** The Authorization header, for a request to the origin the credentials were given for and no other. */
  private async headers(url: string): Promise<Record<string, string>> {
    const auth = this.opts.auth;
    if (!auth || new URL(url).origin !== this.origin) return {};
    const key = promSecretKey(this.baseUrl, auth);
    const secret = (await this.opts.secrets?.get(key)) ?? null;
    if (secret === null) {
      throw new PromRequestError({
        code: 'auth',
        message: `${this.label} needs ${auth.kind === 'basic' ? `the password of ${auth.user}` : 'a bearer token'}, and none is saved`,
        fix: 'Enter it again in the Prometheus panel (it is kept with the other secrets).',
      });
    }
    return {
      authorization:
        auth.kind === 'basic'
          ? `Basic ${Buffer.from(`${auth.user}:${secret}`, 'utf8').toString('base64')}`
          : `Bearer ${secret}`,
    };
  }

  private async call(
    method: 'GET' | 'POST',
    path: string,
    form: URLSearchParams | null,
    ctx: Ctx,
    signal: AbortSignal | undefined,
    shape: { startS: number; endS: number; stepS: number } | null | 'whole',
  ): Promise<{ answer: ReadAnswer; warnings: string[]; bytes: number }> {
    const body = form ? Buffer.from(form.toString(), 'utf8') : undefined;
    const timeoutMs = this.opts.timeoutMs ?? 30_000;
    const maxBytes = this.opts.maxBytes ?? 32 * 1024 * 1024;
    const q = ctx.query ? { query: ctx.query } : {};
    let agent: http.Agent;
    try {
      agent = this.agentOf();
    } catch (e) {
      throw new PromRequestError({
        code: 'unreachable',
        message: `${ctx.what}: ${this.label} cannot be reached: ${(e as Error).message}`,
        fix: 'Reconnect the host the Prometheus is reached through.',
        ...q,
      });
    }
    let url = this.baseUrl + path;
    for (let hop = 0; ; hop++) {
      let reader: AnswerReader | null = null;
      let res: BoundedResponse;
      try {
        res = await boundedRequest(
          agent,
          {
            method,
            url,
            headers: {
              accept: 'application/json',
              'accept-encoding': 'identity',
              ...(await this.headers(url)),
              ...(body
                ? {
                    'content-type': 'application/x-www-form-urlencoded',
                    'content-length': String(body.length),
                  }
                : {}),
            },
            ...(body ? { body } : {}),
            ...(signal ? { signal } : {}),
            ...(url.startsWith('https:') ? { trust: this.trustStore(ctx) } : {}),
            sink: (head) => {
              if (isRedirect(head.status)) return null;
              reader = new AnswerReader({
                shape: shape === 'whole' ? 'whole' : 'series',
                ...(shape && shape !== 'whole' ? { grid: shape } : {}),
                maxSeries: this.opts.maxSeries ?? MAX_SERIES_PER_ANSWER,
                maxPoints: this.opts.maxPoints ?? MAX_POINTS_PER_ANSWER,
              });
              return reader;
            },
          },
          { timeoutMs, maxBytes },
          {
            tooLarge: `answer larger than ${Math.round(maxBytes / 1024 / 1024)} MB`,
            timeout: `no complete answer within ${timeoutMs / 1000} s`,
            failed: (e) => e.message,
          },
        );
      } catch (e) {
        throw this.transportFailure(e as Error, ctx, url, signal?.aborted === true);
      }
      const location = res.headers.location;
      if (isRedirect(res.status) && typeof location === 'string') {
        const next = new URL(location, url);
        const shown = withoutUserinfo(next);
        if (next.origin !== this.origin)
          this.fail({
            code: 'bad-query',
            message: `${ctx.what}: ${this.label} answered with a redirect to ${shown}, another scheme, host or port than ${this.origin}; not followed (neither the query nor any credentials go there)`,
            fix: `If that is the same Prometheus, give its URL (${next.origin}${this.baseUrl.slice(this.origin.length)}) instead.`,
            ...q,
          });
        if (hop >= MAX_REDIRECTS)
          this.fail({
            code: 'bad-query',
            message: `${ctx.what}: ${this.label} redirected more than ${MAX_REDIRECTS} times (last to ${shown})`,
            fix: 'Check the URL: it must be the Prometheus base URL (with its --web.route-prefix, if any).',
            ...q,
          });
        url = next.toString();
        continue;
      }
      return this.decode(res, reader, ctx);
    }
  }

  /** What an https request is verified against; a CA file that cannot be read fails the request, by name. */
  private trustStore(ctx: Ctx): TrustStore {
    try {
      this.trust ??= this.opts.caFile ? trustWithCaFile(this.opts.caFile) : systemTrust();
      return this.trust;
    } catch (e) {
      if (!(e instanceof CaFileError)) throw e;
      throw new PromRequestError({
        code: 'tls',
        message: `${ctx.what}: ${this.label}: ${e.message}`,
        fix: 'Fix the CA file in the Prometheus settings (the PEM file of the CA that signed its certificate).',
        ...(ctx.query ? { query: ctx.query } : {}),
      });
    }
  }

  private transportFailure(e: Error, ctx: Ctx, url: string, aborted: boolean): PromRequestError {
    const q = ctx.query ? { query: ctx.query } : {};
    if (e instanceof PromRequestError) return e;
    if (aborted) {
      return new PromRequestError({ code: 'timeout', message: `${ctx.what}: cancelled`, ...q });
    }
    if (e instanceof AnswerLimitError)
      return new PromRequestError({
        code: 'too-many-samples',
        message: `${ctx.what}: ${this.label} answered more than was asked: ${e.message}`,
        fix: e.fix,
        ...q,
      });
    if (e instanceof AnswerShapeError) return this.garbage(ctx, e.message);
    if (e instanceof HttpError && e.code === 'timeout') {
      return new PromRequestError({
        code: 'timeout',
        message: `${ctx.what}: ${this.label} gave ${e.message}`,
        fix: ctx.query
          ? 'Choose a shorter range or a coarser step, or raise the client timeout; Prometheus may be overloaded.'
          : 'Check that Prometheus is not overloaded or stuck.',
        ...q,
      });
    }
    if (e instanceof HttpError && e.code === 'too-large') {
      return new PromRequestError({
        code: 'too-many-samples',
        message: `${ctx.what}: ${this.label} sent an ${e.message}; stopped reading`,
        fix: 'Choose a coarser step or a narrower query (fewer series).',
        ...q,
      });
    }
    if (e instanceof HttpError && e.code === 'tls') {
      return new PromRequestError({
        code: 'tls',
        message: `${ctx.what}: ${this.label}: ${e.message}`,
        fix: this.opts.caFile
          ? `Check that ${this.opts.caFile} (the CA file in the Prometheus settings) holds the CA that signed this certificate, and that the URL's host is the name on it.`
          : "If this Prometheus uses a certificate of a private CA, name that CA's PEM file in the Prometheus settings (CA file; `--prometheus-ca FILE` for the CLI). Check that the URL's host is the name on the certificate.",
        ...q,
      });
    }
    return new PromRequestError({
      code: 'unreachable',
      message: `${ctx.what}: ${url} (${this.label}) cannot be reached: ${e.message}`,
      fix: 'Check that Prometheus runs and listens on that address and port.',
      ...q,
    });
  }

  private decode(
    res: BoundedResponse,
    reader: AnswerReader | null,
    ctx: Ctx,
  ): { answer: ReadAnswer; warnings: string[]; bytes: number } {
    const q = ctx.query ? { query: ctx.query } : {};
    if (res.status === 401 || res.status === 403) {
      return this.fail({
        code: 'auth',
        message: `${ctx.what}: ${this.label} refused ${this.opts.auth ? 'the saved credentials' : 'a request without credentials'} (HTTP ${res.status})`,
        fix: this.opts.auth
          ? 'Check the user and password (or the token) in the Prometheus panel.'
          : 'This Prometheus wants basic auth or a bearer token: set it in the Prometheus panel.',
        ...q,
      });
    }
    let answer: ReadAnswer;
    try {
      answer = reader
        ? reader.result()
        : { json: false, head: res.body, complete: true, series: [], seriesKind: null, notes: [] };
    } catch (e) {
      if (e instanceof AnswerShapeError) throw this.garbage(ctx, e.message);
      throw e;
    }
    const env = answer.json ? envelope.safeParse(answer) : null;
    if (!env?.success) {
      const quoted = snippet(answer.head);
      if (res.status >= 500) {
        return this.fail({
          code: 'server-error',
          message: `${ctx.what}: ${this.label} answered HTTP ${res.status}: ${quoted}`,
          fix: 'Prometheus (or a proxy in front of it) failed; look at its log.',
          ...q,
        });
      }
      if (res.status >= 400) {
        return this.fail({
          code: 'bad-query',
          message: `${ctx.what}: ${this.label} answered HTTP ${res.status}: ${quoted}`,
          fix: 'Check the URL: it must be the Prometheus base URL (with its --web.route-prefix, if any).',
          ...q,
        });
      }
      return this.fail({
        code: 'garbage',
        message: `${ctx.what}: ${this.label} answered HTTP ${res.status} with something that is not the Prometheus API's JSON: ${quoted}`,
        fix: 'Check that the URL points at Prometheus (or Thanos, VictoriaMetrics, Mimir) and not at another service.',
        ...q,
      });
    }
    const { status, errorType, error, warnings, infos } = env.data;
    if (status === 'error') return this.fail(this.apiFailure(res.status, errorType ?? '', error ?? '', ctx));
    const hasData = answer.data !== undefined || answer.resultType !== undefined || answer.series.length > 0;
    if (res.status !== 200 || !hasData) {
      return this.fail({
        code: 'garbage',
        message: `${ctx.what}: ${this.label} answered HTTP ${res.status} "success" without data`,
        ...q,
      });
    }
    return { answer, warnings: [...(warnings ?? []), ...(infos ?? [])], bytes: res.received };
  }

  /** Prometheus' own error answers (errorType + error), turned into what the operator should change. */
  private apiFailure(httpStatus: number, errorType: string, error: string, ctx: Ctx): PromFailure {
    const q = ctx.query ? { query: ctx.query } : {};
    const said = `${ctx.what}: ${this.label} says "${error}"`;
    if (/exceeded maximum resolution/i.test(error)) {
      const min = ctx.startS !== undefined && ctx.endS !== undefined ? minStepS(ctx.startS, ctx.endS) : null;
      return {
        code: 'resolution-too-fine',
        message: said,
        fix:
          min !== null
            ? `Use a step ≥ ${min} s for this ${formatSpan((ctx.endS ?? 0) - (ctx.startS ?? 0))} range (Prometheus allows ${MAX_POINTS_PER_SERIES.toLocaleString('en')} points per series).`
            : `Use a coarser step (Prometheus allows ${MAX_POINTS_PER_SERIES.toLocaleString('en')} points per series).`,
        ...q,
      };
    }
    if (/too many samples/i.test(error)) {
      return {
        code: 'too-many-samples',
        message: said,
        fix: 'Choose a shorter range or a coarser step, or raise --query.max-samples on that Prometheus.',
        ...q,
      };
    }
    if (errorType === 'timeout' || /timed out/i.test(error)) {
      return {
        code: 'timeout',
        message: said,
        fix: 'Choose a shorter range or a coarser step, or raise --query.timeout on that Prometheus.',
        ...q,
      };
    }
    if (errorType === 'bad_data') {
      return {
        code: 'bad-query',
        message: said,
        fix: ctx.query ? 'The query or its parameters were refused; see the message.' : undefined,
        ...q,
      };
    }
    return {
      code:
        httpStatus >= 500 || errorType === 'internal' || errorType === 'unavailable'
          ? 'server-error'
          : 'bad-query',
      message: `${said} (${errorType || 'error'}, HTTP ${httpStatus})`,
      fix: 'Look at the Prometheus log for the cause.',
      ...q,
    };
  }

  private garbage(ctx: Ctx, why: string): PromRequestError {
    return new PromRequestError({
      code: 'garbage',
      message: `${ctx.what}: ${this.label} answered, but ${why}`,
      fix: 'Check that the URL points at Prometheus (or Thanos, VictoriaMetrics, Mimir).',
      ...(ctx.query ? { query: ctx.query } : {}),
    });
  }

  private fail(f: PromFailure): never {
    if (f.fix === undefined) delete f.fix;
    throw new PromRequestError(f);
  }
}

interface Ctx {
  what: string;
  query?: string;
  startS?: number;
  endS?: number;
  stepS?: number;
}

const isRedirect = (status: number): boolean => [301, 302, 303, 307, 308].includes(status);

/** A URL as shown in messages: never with the user and password it may carry. */
function withoutUserinfo(u: URL): string {
  const c = new URL(u);
  c.username = '';
  c.password = '';
  return c.toString();
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const scalarData = z.object({
  data: z.object({ result: z.tuple([z.number(), z.string()]) }),
});

function snippet(body: string): string {
  const one = body.replace(/\s+/g, ' ').trim();
  return one.length > 160 ? `${one.slice(0, 160)}…` : one || '(empty body)';
}

function formatSpan(s: number): string {
  if (s >= 86400) return `${+(s / 86400).toFixed(1)} d`;
  if (s >= 3600) return `${+(s / 3600).toFixed(1)} h`;
  return `${Math.round(s)} s`;
}
