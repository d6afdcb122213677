// Which unit on a host runs a Prometheus-API engine — prometheus, vmagent or victoria-metrics — by what its
// ExecStart runs (never by the unit's name), and where it listens and reads its scrape config, from its flags
// as the engine itself parses them: kingpin's `--flag=value` / `--flag value` for prometheus, Go's flag package
// (`-flag=value`, `--flag value`) for VictoriaMetrics. The command is read as for SGLang's units
// (discovery/unit-command.ts): the running process first, else the unit file. Pure: evidence in, findings out.
import { expandEnv, splitExecLine } from '../discovery/exec-words';
import { parseEvidence, resolveUnitCommand, type UnitEvidence } from '../discovery/unit-command';
import { connectHost } from '../discovery/discover';

export type PromEngine = 'prometheus' | 'vmagent' | 'victoria-metrics';

export interface PromUnitFinding {
  unit: string;
  hostId: string;
  engine: PromEngine;
  activeState?: string;
  /** As the flag gives it (or the engine's default), e.g. `127.0.0.1:9090`, `:8429`. */
  listenAddress: string;
  /** `http://HOST:PORT[prefix]` dialled from the host itself (wildcards become 127.0.0.1). */
  url: string;
  /** The scrape config file, absolute when the flag was; null when the engine runs without one. */
  configFile: string | null;
  /** The retention flag as written (`15d`, vm `-retentionPeriod=1` = months), null when not set. */
  retention: string | null;
  /** The flag the value came from, for messages ("--web.listen-address"). */
  listenFlag: string;
  configFlag: string;
  /** Defaults used because the flag is absent, and $VARs left unresolved: said to the operator, not hidden. */
  notes: string[];
}

/** What was read about a unit that mentions an engine (read-units.ts). */
export type PromUnitEvidence = UnitEvidence & { show: string };

const ENGINES: Record<string, PromEngine> = {
  prometheus: 'prometheus',
  vmagent: 'vmagent',
  'vmagent-prod': 'vmagent',
  'victoria-metrics': 'victoria-metrics',
  'victoria-metrics-prod': 'victoria-metrics',
  victoriametrics: 'victoria-metrics',
};

interface EngineFlags {
  listen: string;
  listenDefault: string;
  config: string;
  retention: string | null;
  prefix: string | null;
}

const FLAGS: Record<PromEngine, EngineFlags> = {
  prometheus: {
    listen: 'web.listen-address',
    listenDefault: '0.0.0.0:9090',
    config: 'config.file',
    retention: 'storage.tsdb.retention.time',
    prefix: 'web.route-prefix',
  },
  vmagent: {
    listen: 'httpListenAddr',
    listenDefault: ':8429',
    config: 'promscrape.config',
    retention: null,
    prefix: 'http.pathPrefix',
  },
  'victoria-metrics': {
    listen: 'httpListenAddr',
    listenDefault: ':8428',
    config: 'promscrape.config',
    retention: 'retentionPeriod',
    prefix: 'http.pathPrefix',
  },
};

const basename = (p: string): string => p.slice(p.lastIndexOf('/') + 1);

/** The engine an argv runs (first word's basename, or under `env`/a shell wrapper), with the words after it. */
function findEngine(argv: readonly string[]): { engine: PromEngine; args: string[] } | null {
  for (let i = 0; i < argv.length; i++) {
    const engine = ENGINES[basename(argv[i]!)];
    if (engine) return { engine, args: argv.slice(i + 1) };
    // Only wrappers may precede it: env, VAR=value, a shell's -c script (split again).
    const w = argv[i]!;
    if (basename(w) === 'env' || /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) continue;
    if (/^(ba|da|z|k)?sh$/.test(basename(w)) && argv[i + 1] === '-c' && argv[i + 2]) {
      const inner = splitExecLine(argv[i + 2]!.replace(/^exec\s+/, ''));
      return inner.error ? null : findEngine(inner.argv);
    }
    return null;
  }
  return null;
}

/** A flag's value: `--name=value`, `-name=value`, `--name value`, `-name value`; the last one wins, as in both parsers. */
function flagValue(args: string[], name: string): string | null {
  let value: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const m = /^--?([^=]+)(?:=(.*))?$/s.exec(a);
    if (!m || m[1] !== name) continue;
    if (m[2] !== undefined) value = m[2];
    else if (i + 1 < args.length) value = args[++i]!;
  }
  return value;
}

function hostPort(addr: string): { host: string; port: number } | null {
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d+)$/.exec(addr.trim());
  if (!m) return null;
  return { host: m[1] ?? m[2] ?? '', port: Number(m[3]) };
}

/** An engine in an argv, with the variables its configured command left unresolved. */
function findEngineIn(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
): { engine: PromEngine; args: string[]; unresolved: string[] } | undefined {
  const expanded = expandEnv(argv, env);
  const found = findEngine(expanded.argv);
  return found ? { ...found, unresolved: expanded.unresolved } : undefined;
}

export function findPromUnits(hostId: string, units: readonly PromUnitEvidence[]): PromUnitFinding[] {
  const out: PromUnitFinding[] = [];
  for (const ev of units) {
    const parsed = parseEvidence(ev);
    const resolved = resolveUnitCommand(parsed, findEngineIn);
    const found = resolved.command;
    if (!found) continue;
    const activeState = parsed.show?.activeState;
    const f = FLAGS[found.engine];
    const notes: string[] = [];
    if (found.unresolved.length)
      notes.push(
        `ExecStart of ${ev.unit} uses ${found.unresolved.map((v) => `$${v}`).join(', ')}, which is set in no Environment= or EnvironmentFile= that could be read` +
          (resolved.unreadEnvFiles.length ? ` (not readable: ${resolved.unreadEnvFiles.join(', ')})` : ''),
      );
    const listenGiven = flagValue(found.args, f.listen);
    const listenAddress = listenGiven ?? f.listenDefault;
    if (listenGiven === null)
      notes.push(`no -${f.listen} flag: ${found.engine} listens on ${f.listenDefault}`);
    const hp = hostPort(listenAddress);
    if (!hp) {
      notes.push(`-${f.listen}=${listenAddress} is not HOST:PORT`);
      continue;
    }
    const prefix = (f.prefix ? flagValue(found.args, f.prefix) : null)?.replace(/\/+$/, '') ?? '';
    out.push({
      unit: ev.unit,
      hostId,
      engine: found.engine,
      ...(activeState ? { activeState } : {}),
      listenAddress,
      url: `http://${connectHost(hp.host)}:${hp.port}${prefix && !prefix.startsWith('/') ? `/${prefix}` : prefix}`,
      configFile:
        flagValue(found.args, f.config) ?? (found.engine === 'prometheus' ? 'prometheus.yml' : null),
      retention: f.retention ? flagValue(found.args, f.retention) : null,
      listenFlag: `${found.engine === 'prometheus' ? '--' : '-'}${f.listen}`,
      configFlag: `${found.engine === 'prometheus' ? '--' : '-'}${f.config}`,
      notes,
    });
  }
  return out;
}

/** Does a `systemctl show` block run one of the engines? Cheap pre-filter before reading env files. */
export const MENTIONS_PROM_ENGINE = /prometheus|vmagent|victoria-metrics|victoriametrics/;
