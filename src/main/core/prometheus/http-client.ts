// PromApi over the app's bounded HTTP: through a host link's SSH tunnel (its ForwardingAgent) or a plain agent
// for a URL the laptop reaches directly. A small typed client rather than the `prometheus-query` package: that
// one sends through axios/fetch with its own transport, so it could neither ride the ssh2 direct-tcpip agent nor
// keep the app's size cap and real-time timeout, and it throws its own error shapes that would still need
// translating into what the operator should change. The HTTP API is five GETs and one POST; zod checks each answer.
import http from 'node:http';
import { z } from 'zod';
import { boundedRequest, HttpError, type BoundedResponse } from '../ssh/http-agent';
import type { SecretStore } from '../ssh/prompts';
import type { PromApi, PromFailure, PromRangeResult, PromRangeSeries, PromTarget } from './prom-api';

/** Credentials in front of a Prometheus (web.config.yml basic_auth_users, or a proxy that wants a bearer token). */
export type PromAuth = { kind: 'basic'; user: string } | { kind: 'bearer' };

/** The SecretStore key of a Prometheus password or token: one per base URL and kind, like `ssh-key-passphrase:FILE`. */
export function promSecretKey(baseUrl: string, auth: PromAuth): string {
  return auth.kind === 'basic' ? `prometheus-basic:${auth.user}@${baseUrl}` : `prometheus-bearer:${baseUrl}`;
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
  timeoutMs?: number;
  maxBytes?: number;
}

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

const sample = z.tuple([z.number(), z.string()]);
const queryData = z.discriminatedUnion('resultType', [
  z.object({
    resultType: z.literal('matrix'),
    result: z.array(z.object({ metric: z.record(z.string(), z.string()), values: z.array(sample) })),
  }),
  z.object({
    resultType: z.literal('vector'),
    result: z.array(z.object({ metric: z.record(z.string(), z.string()), value: sample })),
  }),
  z.object({ resultType: z.literal('scalar'), result: sample }),
  z.object({ resultType: z.literal('string'), result: z.tuple([z.number(), z.string()]) }),
]);

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

function parseValue(text: string): number {
  // Prometheus writes NaN and infinities as "NaN", "+Inf", "-Inf"; Number() reads "+Inf" as NaN.
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

function toPoints(values: [number, string][]): [number, number][] {
  return values.map(([t, v]) => [t, parseValue(v)]);
}

export class PromHttpClient implements PromApi {
  readonly label: string;
  private readonly baseUrl: string;
  private readonly ownAgent: http.Agent | null;
  private readonly agentOf: () => http.Agent;

  constructor(private readonly opts: PromHttpClientOptions) {
    this.label = opts.label;
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    if (opts.agent) {
      this.ownAgent = null;
      this.agentOf = opts.agent;
    } else {
      const own = new http.Agent({ keepAlive: true, maxSockets: 4 });
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
    const { data, warnings, bytes } = await this.call('POST', '/api/v1/query_range', form, ctx, signal);
    return { series: this.series(data, ctx), bytes, warnings };
  }

  async query(expr: string, timeS?: number, signal?: AbortSignal): Promise<PromRangeResult> {
    const form = new URLSearchParams({
      query: expr,
      ...(timeS === undefined ? {} : { time: String(timeS) }),
    });
    const ctx: Ctx = { what: `query ${expr}`, query: expr };
    const { data, warnings, bytes } = await this.call('POST', '/api/v1/query', form, ctx, signal);
    return { series: this.series(data, ctx), bytes, warnings };
  }

  async targets(signal?: AbortSignal): Promise<PromTarget[]> {
    const ctx: Ctx = { what: '/api/v1/targets' };
    const { data } = await this.call('GET', '/api/v1/targets?state=active', null, ctx, signal);
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
    const { data } = await this.call('GET', '/api/v1/status/config', null, ctx, signal);
    const parsed = configData.safeParse(data);
    if (!parsed.success) throw this.garbage(ctx, 'the answer has no `yaml` field');
    return parsed.data.yaml;
  }

  async retentionS(signal?: AbortSignal): Promise<number | null> {
    const ctx: Ctx = { what: '/api/v1/status/flags' };
    const { data } = await this.call('GET', '/api/v1/status/flags', null, ctx, signal);
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

  private series(data: unknown, ctx: Ctx): PromRangeSeries[] {
    const parsed = queryData.safeParse(data);
    if (!parsed.success) throw this.garbage(ctx, 'the result is not a Prometheus matrix, vector or scalar');
    const d = parsed.data;
    switch (d.resultType) {
      case 'matrix':
        return d.result.map((s) => ({ metric: s.metric, values: toPoints(s.values) }));
      case 'vector':
        return d.result.map((s) => ({ metric: s.metric, values: toPoints([s.value]) }));
      case 'scalar':
        return [{ metric: {}, values: toPoints([d.result]) }];
      case 'string':
        throw this.garbage(ctx, 'the query returned a string, not numbers');
    }
  }

  private async headers(): Promise<Record<string, string>> {
    const auth = this.opts.auth;
    if (!auth) return {};
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
    signal?: AbortSignal,
  ): Promise<{ data: unknown; warnings: string[]; bytes: number }> {
    const url = this.baseUrl + path;
    const body = form ? Buffer.from(form.toString(), 'utf8') : undefined;
    const timeoutMs = this.opts.timeoutMs ?? 30_000;
    const maxBytes = this.opts.maxBytes ?? 32 * 1024 * 1024;
    let agent: http.Agent;
    try {
      agent = this.agentOf();
    } catch (e) {
      throw new PromRequestError({
        code: 'unreachable',
        message: `${ctx.what}: ${this.label} cannot be reached: ${(e as Error).message}`,
        fix: 'Reconnect the host the Prometheus is reached through.',
        ...(ctx.query ? { query: ctx.query } : {}),
      });
    }
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
            ...(await this.headers()),
            ...(body
              ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(body.length) }
              : {}),
          },
          ...(body ? { body } : {}),
          ...(signal ? { signal } : {}),
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
    return this.decode(res, ctx);
  }

  private transportFailure(e: Error, ctx: Ctx, url: string, aborted: boolean): PromRequestError {
    const q = ctx.query ? { query: ctx.query } : {};
    if (e instanceof PromRequestError) return e;
    if (aborted) {
      return new PromRequestError({ code: 'timeout', message: `${ctx.what}: cancelled`, ...q });
    }
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
    return new PromRequestError({
      code: 'unreachable',
      message: `${ctx.what}: ${url} (${this.label}) cannot be reached: ${e.message}`,
      fix: 'Check that Prometheus runs and listens on that address and port.',
      ...q,
    });
  }

  private decode(res: BoundedResponse, ctx: Ctx): { data: unknown; warnings: string[]; bytes: number } {
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
    let json: unknown;
    try {
      json = JSON.parse(res.body);
    } catch {
      json = undefined;
    }
    const env = envelope.safeParse(json);
    if (!env.success) {
      if (res.status >= 500) {
        return this.fail({
          code: 'server-error',
          message: `${ctx.what}: ${this.label} answered HTTP ${res.status}: ${snippet(res.body)}`,
          fix: 'Prometheus (or a proxy in front of it) failed; look at its log.',
          ...q,
        });
      }
      if (res.status >= 400) {
        return this.fail({
          code: 'bad-query',
          message: `${ctx.what}: ${this.label} answered HTTP ${res.status}: ${snippet(res.body)}`,
          fix: 'Check the URL: it must be the Prometheus base URL (with its --web.route-prefix, if any).',
          ...q,
        });
      }
      return this.fail({
        code: 'garbage',
        message: `${ctx.what}: ${this.label} answered HTTP ${res.status} with something that is not the Prometheus API's JSON: ${snippet(res.body)}`,
        fix: 'Check that the URL points at Prometheus (or Thanos, VictoriaMetrics, Mimir) and not at another service.',
        ...q,
      });
    }
    const { status, data, errorType, error, warnings, infos } = env.data;
    if (status === 'error') return this.fail(this.apiFailure(res.status, errorType ?? '', error ?? '', ctx));
    if (res.status !== 200 || data === undefined) {
      return this.fail({
        code: 'garbage',
        message: `${ctx.what}: ${this.label} answered HTTP ${res.status} "success" without data`,
        ...q,
      });
    }
    return { data, warnings: [...(warnings ?? []), ...(infos ?? [])], bytes: res.bytes.length };
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

function snippet(body: string): string {
  const one = body.replace(/\s+/g, ' ').trim();
  return one.length > 160 ? `${one.slice(0, 160)}…` : one || '(empty body)';
}

function formatSpan(s: number): string {
  if (s >= 86400) return `${+(s / 86400).toFixed(1)} d`;
  if (s >= 3600) return `${+(s / 3600).toFixed(1)} h`;
  return `${Math.round(s)} s`;
}
