// `pd-console history SIGNAL --host H --since 7d [--step 1m] [--json]`: one signal's series over a range, from
// the history service the charts use — Prometheus for what the app did not see (reached through the host's
// SSH tunnel, as a GPU host's Prometheus listens on its loopback), the app's own scrapes for the newest
// seconds — each part printed with its source. The scriptable answer to "how full was the KV cache last night".
import type { HistoryResult } from '@shared/contract';
import { isScopedSignalKey } from '@shared/signals/is-signal-key';
import { splitScopedKey, type ScopedKey } from '@shared/signals/scoped-key';
import { specsFor } from '@shared/signals/spec';
import type { Role } from '@shared/domain';
import { PromHttpClient, parsePromDurationS } from '../core/prometheus/http-client';
import { preparePromSource, type PromSource } from '../core/prometheus/prom-source';
import { memorySecrets } from '../core/ssh/prompts';
import { MAX_POINTS_PER_SERIES } from '../core/prometheus/history-step';
import type { CliIo } from './cli-io';
import { defineCommand, parseCommandLine, UsageError } from './cli-args';
import { HOST_OPTION, hostArg, isSimulated, openTarget } from './target';
import { withApp, type CliAppDeps } from './cli-app';
import { oneLine } from '@shared/display-text';

export const HISTORY_USAGE = `usage: pd-console history SIGNAL [--host H] --since 7d [--step 1m] [--json]
                          [--prometheus URL [--direct] [--prometheus-ca FILE]] [--match 'job="sglang-decode"']
  SIGNAL       a key of the signal specification, e.g. decode.kv_ratio, decode.ttft_p99_s,
               router.router_requests_per_s (scoped to a fleet worker with @, decode.kv_ratio@decode-1)
  --since D    how far back (Prometheus durations: 90m, 24h, 7d, 2w); default 24h
  --step S     one point every S (default: about 1,000 points; never finer than Prometheus allows)
  --prometheus URL   the Prometheus that scrapes the deployment, reached through --host's SSH tunnel
               (add --direct to reach it from this machine); --match the label matchers of the signal's
               series there (default: none — every series of the family); a user:password@ in the URL
               is sent as basic auth to that URL only; --prometheus-ca the PEM file of a private CA
               that signed an https Prometheus' certificate
  --json       { key, parts: [{ source, label, query, stepS, points: [[epoch ms, value], …] }], problems }`;

export interface HistoryCommandDeps extends CliAppDeps {
  now?: () => number;
}

function usage(io: CliIo, why: string): number {
  io.stderr(`pd-console history: ${why}\n${HISTORY_USAGE}\n`);
  return 2;
}

export const HISTORY_COMMAND = defineCommand({
  name: 'history',
  usage: HISTORY_USAGE,
  options: {
    host: HOST_OPTION,
    since: { type: 'string', needs: 'a duration such as 90m, 24h or 7d' },
    step: { type: 'string', needs: 'a duration such as 15s or 1m' },
    json: { type: 'boolean' },
    prometheus: { type: 'string', needs: 'the URL, e.g. http://127.0.0.1:9090' },
    'prometheus-ca': { type: 'string', needs: "the PEM file of the Prometheus' private CA" },
    direct: { type: 'boolean' },
    match: { type: 'string', needs: `label matchers, e.g. 'job="sglang-decode"'` },
  },
});

export async function historyCommand(
  argv: string[],
  io: CliIo,
  deps: HistoryCommandDeps = {},
): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(HISTORY_COMMAND, argv);
  } catch (err) {
    if (err instanceof UsageError) return usage(io, err.message);
    throw err;
  }
  if (parsed.help) {
    io.stdout(`${HISTORY_USAGE}\n`);
    return 0;
  }
  const flags = parsed.values;
  const [key, ...extra] = parsed.positionals;
  if (!key) return usage(io, 'which signal? e.g. decode.kv_ratio');
  if (extra.length) return usage(io, `one signal at a time (got ${JSON.stringify(extra[0])} too)`);
  if (!isScopedSignalKey(key))
    return usage(io, `${JSON.stringify(key)} is not a signal key of src/shared/signals/spec.ts`);
  const sinceS = parsePromDurationS(flags.since ?? '24h');
  if (sinceS === null || sinceS <= 0)
    return usage(io, `--since needs a duration such as 90m, 24h or 7d, got ${JSON.stringify(flags.since)}`);
  let stepS: number | null = null;
  if (flags.step !== undefined) {
    stepS = parsePromDurationS(flags.step);
    if (stepS === null || stepS <= 0)
      return usage(io, `--step needs a duration such as 15s or 1m, got ${JSON.stringify(flags.step)}`);
    if (sinceS / stepS > MAX_POINTS_PER_SERIES)
      return usage(
        io,
        `--step ${flags.step} over --since ${flags.since ?? '24h'} is ${Math.ceil(sinceS / stepS)} points; Prometheus answers at most ${MAX_POINTS_PER_SERIES} per series — use a step of at least ${Math.ceil(sinceS / MAX_POINTS_PER_SERIES)}s`,
      );
  }
  const promUrl = flags.prometheus;
  // Session-only: a password from the URL lives in memory for this run, sent to that URL's origin only.
  const secrets = memorySecrets();
  let prom: PromSource | undefined;
  if (promUrl !== undefined) {
    const caFile = flags['prometheus-ca'];
    try {
      prom = await preparePromSource({ url: promUrl, ...(caFile !== undefined ? { caFile } : {}) }, secrets);
    } catch (e) {
      const { message, hint } = e as Error & { hint?: string };
      return usage(io, `--prometheus: ${message}${hint ? ` — ${hint}` : ''}`);
    }
    for (const w of prom.warnings) io.stderr(`pd-console history: ${w}\n`);
  }
  const match = flags.match ?? '';
  const host = hostArg(flags.host);

  return withApp(deps, {}, async (app) => {
    const core = app.core;
    let client: PromHttpClient | undefined;
    try {
      const summary = await openTarget(app, host);
      const deploymentId = summary.deployment.id;
      if (prom) {
        const direct = flags.direct === true;
        client = new PromHttpClient({
          baseUrl: prom.url,
          label: direct
            ? `Prometheus at ${prom.url}`
            : `Prometheus at ${prom.url} via ${summary.host.label || host}`,
          ...(direct ? {} : { agent: () => core.connectionOf(deploymentId).httpAgent() }),
          ...(prom.auth ? { auth: prom.auth, secrets } : {}),
          ...(prom.caFile ? { caFile: prom.caFile } : {}),
        });
        const api = client;
        // The scrape interval bounds the step and widens the windows; the targets list says it.
        const intervals = await api.targets().then(
          (ts) => ts.map((t) => t.scrapeIntervalS).filter((s): s is number => s !== null),
          () => [] as number[],
        );
        const scrapeIntervalS = intervals.length ? Math.max(...intervals) : undefined;
        app.history.setPrometheus(async () => ({
          api,
          scrapeIntervalS,
          selector: () => match,
          gpuSelector: () => match,
        }));
      }
      // Without --prometheus the app's own wiring applies: the Prometheus discovery finds on the deployment's hosts.
      const now = deps.now?.() ?? Date.now();
      const fromMs = now - sinceS * 1000;
      const points = stepS ? Math.max(2, Math.ceil(sinceS / stepS)) : 1000;
      const res = await app.history.history({
        deploymentId,
        keys: [key as ScopedKey],
        fromMs,
        toMs: now,
        points,
      });
      io.stdout(
        flags.json
          ? `${JSON.stringify({ simulated: isSimulated(summary.host), ...jsonOf(res) }, null, 1)}\n`
          : textOf(key, res, fromMs, now, summary.host.label),
      );
      return res.series[0].parts.some((p) => p.points.some(([, v]) => v !== null)) ? 0 : 1;
    } catch (err) {
      const e = err as Error & { hint?: string };
      io.stderr(`pd-console history: ${e.message}\n${e.hint ? `hint: ${e.hint}\n` : ''}`);
      return 1;
    } finally {
      client?.dispose();
    }
  });
}

function jsonOf(res: HistoryResult): Record<string, unknown> {
  const s = res.series[0];
  return {
    key: s.key,
    parts: s.parts.map((p) => ({
      source: p.source,
      label: p.label,
      ...(p.query ? { query: p.query, stepS: p.stepS } : {}),
      points: p.points,
    })),
    problems: s.problems,
  };
}

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

function textOf(key: string, res: HistoryResult, fromMs: number, toMs: number, hostLabel: string): string {
  const s = res.series[0];
  const base = splitScopedKey(key).key;
  const role = base.split('.')[0];
  const spec = role === 'gpu' ? undefined : specsFor(role as Role)[base.slice(role.length + 1)];
  const lines = [
    `${oneLine(hostLabel)}: ${key}${spec ? ` — ${spec.label} (${spec.unit})` : ''}, ${iso(fromMs)} … ${iso(toMs)}`,
  ];
  for (const p of s.parts) {
    const values = p.points.filter(([, v]) => v !== null).length;
    lines.push(
      '',
      `from ${p.source}: ${oneLine(p.label)}${p.stepS ? `, one point every ${p.stepS} s` : ''} (${values} values)`,
      ...(p.query ? [`  query: ${oneLine(p.query)}`] : []),
    );
    for (const [t, v] of p.points) lines.push(`  ${iso(t)}  ${v === null ? '—' : String(+v.toPrecision(6))}`);
  }
  for (const p of s.problems)
    lines.push(
      '',
      `${p.source}: ${oneLine(p.message)}`,
      ...(p.fix ? [`  what to do: ${oneLine(p.fix)}`] : []),
      ...(p.query ? [`  query: ${oneLine(p.query)}`] : []),
    );
  if (s.parts.length === 0 && s.problems.length === 0) lines.push('', 'no data in this range');
  return `${lines.join('\n')}\n`;
}
