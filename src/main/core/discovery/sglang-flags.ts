// The SGLang server and router flags discovery needs (reference §2.2, §4), read argparse-style:
// `--flag value` and `--flag=value`, last occurrence wins, repeatable flags collected in order.

import { cleanWorkerUrl } from '@shared/worker-url';

export function flagValue(args: readonly string[], names: readonly string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    for (const n of names) {
      if (a === n) {
        const next = args[i + 1];
        if (next !== undefined && !next.startsWith('--')) value = next;
      } else if (a.startsWith(`${n}=`)) value = a.slice(n.length + 1);
    }
  }
  return value;
}

export function hasFlag(args: readonly string[], names: readonly string[]): boolean {
  return args.some((a) => names.some((n) => a === n || a.startsWith(`${n}=`)));
}

/** Every occurrence of a repeatable flag with the non-flag words that follow it (argparse nargs="+"). */
export function flagGroups(args: readonly string[], name: string): string[][] {
  const groups: string[][] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === name) {
      const g: string[] = [];
      while (i + 1 < args.length && !args[i + 1].startsWith('--')) g.push(args[++i]);
      groups.push(g);
    } else if (a.startsWith(`${name}=`)) {
      const g = [a.slice(name.length + 1)];
      while (i + 1 < args.length && !args[i + 1].startsWith('--')) g.push(args[++i]);
      groups.push(g);
    }
  }
  return groups;
}

/** A value still holding `$VAR` / `${VAR}`: the unit's configuration, with a variable discovery could not read. */
export const UNEXPANDED = /\$\{?[A-Za-z_]/;

export interface ServerFlags {
  mode: 'prefill' | 'decode' | null;
  /** As given (default 127.0.0.1, SGLang's ServerArgs default). */
  host: string;
  /** Default 30000. */
  port: number;
  enableMetrics: boolean;
  baseGpuId: number;
  gpuIdStep: number;
  tp: number;
  dp: number;
  pp: number;
  dpAttention: boolean;
  nnodes: number;
  nodeRank: number;
  /** --dist-init-addr HOST:PORT of a multi-node server: the same on every node of one server. */
  distInitAddr?: string;
  /** --disaggregation-bootstrap-port, default 8998. */
  bootstrapPort: number;
  servedModelName?: string;
  modelPath?: string;
  problems: string[];
  /** Flags whose value is not known (an unexpanded variable, or a value SGLang refuses): never used as facts. */
  unknown: string[];
}

export function parseServerFlags(args: readonly string[]): ServerFlags {
  const problems: string[] = [];
  const unknown: string[] = [];
  const int = (names: string[], dflt: number, min = 0): number => {
    const v = flagValue(args, names);
    if (v === undefined) return dflt;
    if (UNEXPANDED.test(v)) {
      unknown.push(names[0]);
      return dflt;
    }
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) {
      problems.push(
        `${names[0]} ${JSON.stringify(v)} is not an integer ≥ ${min}: SGLang's argument parser refuses it, so the server cannot start with this command`,
      );
      unknown.push(names[0]);
      return dflt;
    }
    return n;
  };
  const modeRaw = flagValue(args, ['--disaggregation-mode']);
  let mode: ServerFlags['mode'] = null;
  if (modeRaw === 'prefill' || modeRaw === 'decode') mode = modeRaw;
  else if (modeRaw !== undefined && UNEXPANDED.test(modeRaw)) unknown.push('--disaggregation-mode');
  else if (modeRaw !== undefined && modeRaw !== 'null')
    problems.push(`unknown --disaggregation-mode ${JSON.stringify(modeRaw)}`);
  const hostRaw = flagValue(args, ['--host']);
  if (hostRaw !== undefined && UNEXPANDED.test(hostRaw)) unknown.push('--host');
  const served = flagValue(args, ['--served-model-name']);
  const model = flagValue(args, ['--model-path', '--model']);
  const distInit = flagValue(args, ['--dist-init-addr', '--nccl-init-addr']);
  return {
    mode,
    host: hostRaw ?? '127.0.0.1',
    port: int(['--port'], 30000, 1),
    enableMetrics: hasFlag(args, ['--enable-metrics']),
    baseGpuId: int(['--base-gpu-id'], 0),
    gpuIdStep: int(['--gpu-id-step'], 1, 1),
    tp: int(['--tp-size', '--tp', '--tensor-parallel-size'], 1, 1),
    dp: int(['--dp-size', '--dp', '--data-parallel-size'], 1, 1),
    pp: int(['--pp-size', '--pp', '--pipeline-parallel-size'], 1, 1),
    dpAttention: hasFlag(args, ['--enable-dp-attention']),
    nnodes: int(['--nnodes'], 1, 1),
    nodeRank: int(['--node-rank'], 0),
    ...(distInit !== undefined ? { distInitAddr: distInit } : {}),
    bootstrapPort: int(['--disaggregation-bootstrap-port'], 8998, 1),
    ...(served !== undefined ? { servedModelName: served } : {}),
    ...(model !== undefined ? { modelPath: model } : {}),
    problems,
    unknown,
  };
}

export interface WorkerRef {
  url: string;
  /** Prefill bootstrap port given to the router; null for "none"; undefined when omitted. */
  bootstrapPort?: number | null;
}

export interface RouterFlags {
  host: string;
  port: number;
  /** null for the mini load balancer, which has no metrics listener. */
  prometheusHost: string | null;
  /** 0 means an ephemeral port (smg); null when there is no metrics listener. */
  prometheusPort: number | null;
  pd: boolean;
  prefill: WorkerRef[];
  decode: WorkerRef[];
  /** Regular (non-PD) workers from --worker-urls. */
  workerUrls: string[];
  /** Worker URLs (as kept, without it) that the flags gave with user-info; see cleanWorkerUrl. */
  userinfoDropped: string[];
  problems: string[];
  /** Flags whose value is not known (an unexpanded variable, or a value the router refuses). */
  unknown: string[];
}

export function parseRouterFlags(
  args: readonly string[],
  flavour: 'sglang_router' | 'smg' | 'mini_lb',
): RouterFlags {
  const problems: string[] = [];
  const unknown: string[] = [];
  const userinfoDropped: string[] = [];
  // Worker URLs are kept without user-info from here on: nothing downstream can show a password.
  const url = (flag: string, raw: string): string => {
    const c = cleanWorkerUrl(raw);
    if (c.hadUserinfo) {
      userinfoDropped.push(c.url);
      problems.push(
        `${flag} ${c.url} had a user name or password in the URL; the console dropped it and shows none ` +
          '(the router passes it to the worker, and anyone who reads ps, the journal or the unit file sees it: ' +
          "give the worker's key with the router's --api-key instead)",
      );
    }
    return c.url;
  };
  const int = (names: string[], dflt: number): number => {
    const v = flagValue(args, names);
    if (v === undefined) return dflt;
    if (UNEXPANDED.test(v)) {
      unknown.push(names[0]);
      return dflt;
    }
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      problems.push(
        `${names[0]} ${JSON.stringify(v)} is not a port number: the router refuses it, so it cannot start with this command`,
      );
      unknown.push(names[0]);
      return dflt;
    }
    return n;
  };
  for (const name of ['--host', '--prometheus-host']) {
    const v = flagValue(args, [name]);
    if (v !== undefined && UNEXPANDED.test(v)) unknown.push(name);
  }
  if (flavour === 'mini_lb') {
    // python -m sglang.srt.disaggregation.mini_lb --prefill URL… --decode URL… [--prefill-bootstrap-ports P…]
    const ports = flagGroups(args, '--prefill-bootstrap-ports').flat();
    const prefill = flagGroups(args, '--prefill')
      .flat()
      .map((raw, i): WorkerRef => {
        const p = ports[i] === undefined ? undefined : bootstrap(ports[i], problems);
        const u = url('--prefill', raw);
        return p === undefined ? { url: u } : { url: u, bootstrapPort: p };
      });
    return {
      host: flagValue(args, ['--host']) ?? '0.0.0.0',
      port: int(['--port'], 8000),
      prometheusHost: null,
      prometheusPort: null,
      pd: true,
      prefill,
      decode: flagGroups(args, '--decode')
        .flat()
        .map((raw) => ({ url: url('--decode', raw) })),
      workerUrls: [],
      userinfoDropped,
      problems,
      unknown,
    };
  }
  const prefill = flagGroups(args, '--prefill').map((g): WorkerRef => {
    const u = g[0] === undefined ? '' : url('--prefill', g[0]);
    if (g.length === 0) problems.push('--prefill without a URL');
    if (g.length > 2)
      problems.push(`--prefill ${[u, ...g.slice(1)].join(' ')}: expected URL [BOOTSTRAP_PORT]`);
    const p = g[1] === undefined ? undefined : bootstrap(g[1], problems);
    return p === undefined ? { url: u } : { url: u, bootstrapPort: p };
  });
  return {
    host: flagValue(args, ['--host']) ?? '0.0.0.0',
    port: int(['--port'], 30000),
    prometheusHost: flagValue(args, ['--prometheus-host']) ?? '0.0.0.0',
    prometheusPort: int(['--prometheus-port'], 29000),
    pd: hasFlag(args, ['--pd-disaggregation']),
    prefill: prefill.filter((r) => r.url !== ''),
    decode: flagGroups(args, '--decode')
      .flat()
      .map((raw) => ({ url: url('--decode', raw) })),
    workerUrls: flagGroups(args, '--worker-urls')
      .flat()
      .map((raw) => url('--worker-urls', raw)),
    userinfoDropped,
    problems,
    unknown,
  };
}

function bootstrap(v: string, problems: string[]): number | null | undefined {
  if (v.toLowerCase() === 'none') return null;
  const n = Number(v);
  if (Number.isInteger(n) && n > 0 && n <= 65535) return n;
  problems.push(`bootstrap port ${JSON.stringify(v)} is not a port number`);
  return undefined;
}
