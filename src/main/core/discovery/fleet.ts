// From what the hosts of a deployment run to the fleet model (src/shared/fleet.ts), the router outward: every
// worker a router lists is placed on a host (the router's own for loopback URLs or the host's own addresses,
// else the ssh alias whose HostName resolves to the URL's host), then on the unit there whose ExecStart serves
// that port, and a multi-node worker gathers its other node ranks by --dist-init-addr/--nnodes on every host
// scanned. What cannot be placed is said with its reason and fix; SGLang units no router lists are reported.
// Pure: the caller (run-fleet-discovery.ts) ran the commands and HTTP requests and hands in what came back.

import type {
  Fleet,
  FleetHost,
  FleetRouter,
  FleetUnit,
  FleetWorker,
  UnplacedWorker,
  UnroutedUnit,
  WorkerRole,
  WorkerSource,
  WorkersApiFailure,
} from '@shared/fleet';
import type { AliasAddress } from '../ssh/alias-addresses';
import { connectHost, matchEndpoint, type DiscoveredUnit } from './discover';
import { routerWorkerList, sameSpelling, type ApiWorker } from './router-workers';
import { isLoopbackHost, parseWorkerUrl, urlOnHost, workerKey } from '@shared/worker-url';

/** One host as discovery read it. */
export interface HostScan {
  host: string;
  via: FleetHost['via'];
  addresses: string[];
  /** The SGLang units found there (DiscoveryResult.found); absent when the host could not be read. */
  found?: DiscoveredUnit[];
  /** Why the host could not be read. */
  error?: string;
}

/** A router unit on a scanned host, with its live /workers answer when there was one. */
export interface RouterScan {
  host: string;
  unit: DiscoveredUnit;
  workersApi?: ApiWorker[];
  /** What /workers did and what was used instead; with its kind. */
  workersApiError?: string;
  workersApiFailure?: WorkersApiFailure;
}

export type Placement = { host: string } | { code: 'no-alias' | 'bad-url'; reason: string; fix: string };

export interface FleetInput {
  origin: string;
  scans: HostScan[];
  routers: RouterScan[];
  /** Where each worker URL host lives (see placeHost). */
  placement: (urlHost: string) => Placement;
}

/**
 * Which host a worker URL's host is: the router's own host for loopback names and for its own addresses,
 * a scanned host whose addresses include it, else the first ssh alias whose HostName (or what it resolves
 * to) is that address. `urlAddresses` are what the URL's host name resolves to locally (for names).
 */
export function placeHost(
  urlHost: string,
  origin: { host: string; addresses: readonly string[] },
  known: readonly { host: string; addresses: readonly string[] }[],
  aliases: readonly AliasAddress[],
  urlAddresses: readonly string[],
  configFile: string,
): Placement {
  const h = urlHost.toLowerCase();
  const targets = new Set([h, ...urlAddresses.map((a) => a.toLowerCase())]);
  if (isLoopbackHost(h) || origin.addresses.some((a) => targets.has(a.toLowerCase())))
    return { host: origin.host };
  for (const k of known) if (k.addresses.some((a) => targets.has(a.toLowerCase()))) return { host: k.host };
  const hit = aliases.find((a) => !a.problem && a.addresses.some((x) => targets.has(x)));
  if (hit) return { host: hit.alias };
  const broken = aliases.filter((a) => a.problem).map((a) => `${a.alias} (${a.problem})`);
  return {
    code: 'no-alias',
    reason:
      `no ssh alias resolves to ${urlHost}` +
      (broken.length > 0 ? `; aliases ssh could not resolve: ${broken.slice(0, 3).join('; ')}` : ''),
    fix: `add \`Host <name>\` / \`HostName ${urlHost}\` (with its User and IdentityFile) to ${configFile}`,
  };
}

export function assembleFleet(input: FleetInput): Fleet {
  const scans = new Map(input.scans.map((s) => [s.host, s]));
  const routers: FleetRouter[] = input.routers.map((r) => {
    const flags = r.unit.router;
    const list = flags ? routerWorkerList(flags, r.workersApi) : undefined;
    return {
      id: `${r.host}/${r.unit.unit}`,
      host: r.host,
      unit: r.unit.unit,
      apiUrl: r.unit.service?.apiUrl ?? '',
      ...(r.unit.service?.metricsUrl ? { metricsUrl: r.unit.service.metricsUrl } : {}),
      ...(r.unit.activeState ? { activeState: r.unit.activeState } : {}),
      workers: list?.workers ?? [],
      ...(r.workersApiError ? { workersApiError: r.workersApiError } : {}),
      ...(r.workersApiFailure ? { workersApiFailure: r.workersApiFailure } : {}),
      ...(list?.leftOut ? { workersLeftOut: list.leftOut } : {}),
      ...(list?.userinfoDropped.length ? { userinfoDropped: list.userinfoDropped } : {}),
    };
  });
  const routerName = (ids: string[]): string =>
    routers.length === 1 ? 'the router' : ids.map((id) => `router ${id}`).join(' and ');

  // One entry per worker however many routers list it, and under however many spellings: the URL's host and
  // port, or — once placed — the host it is on and the port, so `127.0.0.1`, `localhost`, `[::1]` and the
  // router host's own address are one worker there. Each router keeps its own list.
  interface Listed {
    url: string;
    ep: ReturnType<typeof parseWorkerUrl>;
    place?: Placement;
    role: WorkerRole;
    bootstrapPort?: number | null;
    listedBy: string[];
    /** Where each router has it from, for fixes: its ExecStart flag, its /workers answer. */
    from: { router: FleetRouter; sources: WorkerSource[] }[];
    spellings: string[];
    notes: string[];
  }
  const listed = new Map<string, Listed>();
  for (const r of routers)
    for (const w of r.workers) {
      const ep = parseWorkerUrl(w.url);
      const place = 'error' in ep ? undefined : input.placement(ep.host);
      const rank = 'error' in ep || ep.dpRank === undefined ? '' : `@${ep.dpRank}`;
      const key =
        'error' in ep
          ? `not a URL ${w.url}`
          : place && 'host' in place
            ? `on ${place.host}:${ep.port}${rank}`
            : workerKey(ep);
      const have = listed.get(key);
      if (!have) {
        listed.set(key, {
          url: w.url,
          ep,
          ...(place ? { place } : {}),
          role: w.role,
          ...(w.bootstrapPort !== undefined ? { bootstrapPort: w.bootstrapPort } : {}),
          listedBy: [r.id],
          from: [{ router: r, sources: w.sources }],
          spellings: [w.url, ...(w.alsoListedAs ?? [])],
          notes: [],
        });
        continue;
      }
      if (!have.listedBy.includes(r.id)) have.listedBy.push(r.id);
      have.from.push({ router: r, sources: w.sources });
      for (const u of [w.url, ...(w.alsoListedAs ?? [])])
        if (!have.spellings.some((x) => sameSpelling(x, u))) have.spellings.push(u);
      if (have.role !== w.role)
        have.notes.push(`${r.id} lists it as ${w.role}, ${have.listedBy[0]} as ${have.role}`);
    }

  const workers: FleetWorker[] = [];
  const unplaced: UnplacedWorker[] = [];
  const used = new Set<DiscoveredUnit>();
  for (const l of listed.values()) {
    if (l.spellings.length > 1)
      l.notes.push(
        `listed as ${l.spellings.join(', ')} (by ${whereListed(l.from, l.role, false)}): ` +
          'one server (same host and port), counted once',
      );
    const who = `${l.role} worker ${l.url} (listed by ${routerName(l.listedBy)})`;
    const ep = l.ep;
    if ('error' in ep) {
      unplaced.push({
        url: l.url,
        role: l.role,
        listedBy: l.listedBy,
        code: 'bad-url',
        reason: `${who}: ${ep.error}`,
        fix: `correct the URL in ${whereListed(l.from, l.role)}`,
      });
      continue;
    }
    const place = l.place ?? input.placement(ep.host);
    if (!('host' in place)) {
      unplaced.push({
        url: l.url,
        role: l.role,
        listedBy: l.listedBy,
        code: place.code,
        reason: `${who}: ${place.reason}`,
        fix: place.fix,
      });
      continue;
    }
    const scan = scans.get(place.host);
    const base: Omit<FleetWorker, 'apiUrl' | 'units'> = {
      url: l.url,
      role: l.role,
      baseUrl: ep.baseUrl,
      ...(ep.dpRank !== undefined ? { dpRank: ep.dpRank } : {}),
      host: place.host,
      ...(l.bootstrapPort !== undefined ? { bootstrapPort: l.bootstrapPort } : {}),
      listedBy: l.listedBy,
      notes: [...l.notes],
    };
    if (!scan?.found) {
      const why = scan?.error ?? `${place.host} was not scanned`;
      workers.push({
        ...base,
        apiUrl: urlOnHost(ep, ep.host),
        units: [],
        unreachable: `unreachable: ${why}`,
      });
      continue;
    }
    const servers = scan.found.filter((d) => d.kind === 'server' && d.server && d.server.nodeRank === 0);
    const hit = servers.find((d) => matchEndpoint(ep.baseUrl, d.server!).ok);
    if (!hit) {
      const samePort = servers.find((d) => matchEndpoint(ep.baseUrl, d.server!).portMatches);
      unplaced.push(
        samePort
          ? {
              url: l.url,
              role: l.role,
              listedBy: l.listedBy,
              code: 'unit-listens-elsewhere',
              host: place.host,
              reason: `${who}: reached ${place.host}, but ${samePort.unit} listens on ${samePort.server!.host}:${ep.port} only, which ${ep.host} does not reach`,
              fix: `start ${samePort.unit} with --host 0.0.0.0 (or --host ${ep.host})`,
            }
          : {
              url: l.url,
              role: l.role,
              listedBy: l.listedBy,
              code: 'no-unit',
              host: place.host,
              reason: `${who}: reached ${place.host}, but no unit there runs sglang on port ${ep.port}`,
              fix:
                servers.length > 0
                  ? `SGLang units on ${place.host} serve ${servers.map((d) => `${d.unit} :${d.server!.port}`).join(', ')}; point ${whereListed(l.from, l.role)} at one of them or start the worker's unit`
                  : `start the worker's systemd unit on ${place.host}, or remove it from ${whereListed(l.from, l.role)}`,
            },
      );
      continue;
    }
    used.add(hit);
    const s = hit.server!;
    const units: FleetUnit[] = [unitOf(place.host, hit)];
    let missingRanks: number[] | undefined;
    if (s.nnodes > 1) {
      const others = input.scans.flatMap((sc) =>
        (sc.found ?? [])
          .filter(
            (d) =>
              d !== hit &&
              d.server &&
              d.server.nodeRank > 0 &&
              d.server.nnodes === s.nnodes &&
              s.distInitAddr !== undefined &&
              d.server.distInitAddr?.toLowerCase() === s.distInitAddr.toLowerCase(),
          )
          .map((d) => ({ host: sc.host, d })),
      );
      for (const o of others) {
        used.add(o.d);
        units.push(unitOf(o.host, o.d));
      }
      units.sort((a, b) => a.nodeRank - b.nodeRank);
      const have = new Set(units.map((u) => u.nodeRank));
      missingRanks = Array.from({ length: s.nnodes }, (_, i) => i).filter((i) => !have.has(i));
      if (missingRanks.length > 0)
        base.notes.push(
          s.distInitAddr === undefined
            ? `${hit.unit} is node rank 0 of ${s.nnodes} without --dist-init-addr, so its other nodes cannot be paired`
            : `node rank(s) ${missingRanks.join(', ')} of ${s.nnodes} (--dist-init-addr ${s.distInitAddr}) run on no host scanned (${input.scans.map((x) => x.host).join(', ')}); add that host with --add-host`,
        );
    }
    if (hit.role && l.role !== 'regular' && hit.role !== l.role)
      base.notes.push(
        `the router lists it as ${l.role}, but ${hit.unit} runs --disaggregation-mode ${hit.role}`,
      );
    if (l.role === 'prefill' && base.bootstrapPort === undefined) base.bootstrapPort = s.bootstrapPort;
    const apiUrl = hit.service?.apiUrl ?? `http://${connectHost(s.host)}:${s.port}`;
    const worker: FleetWorker = {
      ...base,
      apiUrl,
      ...(s.enableMetrics ? { metricsUrl: hit.service?.metricsUrl ?? `${apiUrl}/metrics` } : {}),
      units,
      ...(s.nnodes > 1 && s.distInitAddr ? { distInitAddr: s.distInitAddr } : {}),
      ...(missingRanks && missingRanks.length > 0 ? { missingRanks } : {}),
    };
    workers.push(worker);
  }

  const unrouted: UnroutedUnit[] = [];
  for (const sc of input.scans)
    for (const d of sc.found ?? []) {
      if (d.kind !== 'server' || !d.server || used.has(d)) continue;
      const s = d.server;
      unrouted.push({
        host: sc.host,
        unit: d.unit,
        role: d.role === 'prefill' || d.role === 'decode' ? d.role : 'regular',
        apiUrl: d.service?.apiUrl ?? `http://${connectHost(s.host)}:${s.port}`,
        reason:
          s.nodeRank > 0
            ? `node rank ${s.nodeRank} of ${s.nnodes}${s.distInitAddr ? ` (--dist-init-addr ${s.distInitAddr})` : ''}: its node rank 0 is not among the workers a router lists`
            : routers.length === 0
              ? `no router found on ${input.origin}; start from the host that runs the router (pd-console status --host ROUTER_HOST)`
              : "not in the router's worker list",
      });
    }

  // The origin, then the hosts the router led to, then those added by hand: the order the operator reads them in.
  const order: Record<FleetHost['via'], number> = { origin: 0, alias: 1, peer: 2, added: 3 };
  const byVia = [...input.scans].sort((x, y) => order[x.via] - order[y.via]);
  const hosts: FleetHost[] = byVia.map((s) => ({
    id: s.host,
    via: s.via,
    addresses: s.addresses,
    ...(s.error ? { unreachable: s.error } : {}),
  }));
  return { origin: input.origin, hosts, routers, workers, unplaced, unrouted };
}

/**
 * Where the routers have a worker URL from, for a fix to name: `--decode in ExecStart of llm-gateway.service on
 * gpu-a`, or the router's /workers answer (a worker registered at run time, removed with DELETE /workers/ID).
 */
function whereListed(
  from: readonly { router: FleetRouter; sources: WorkerSource[] }[],
  role: WorkerRole,
  howToRemove = true,
): string {
  const flag = role === 'regular' ? '--worker-urls' : `--${role}`;
  const places: string[] = [];
  for (const { router: r, sources } of from) {
    if (sources.includes('execstart')) places.push(`${flag} in ExecStart of ${r.unit} on ${r.host}`);
    if (sources.includes('workers-api') && (!howToRemove || !sources.includes('execstart')))
      places.push(
        `the /workers answer of ${r.unit} on ${r.host}` +
          (howToRemove
            ? ` (registered at run time, not in its ExecStart: DELETE ${r.apiUrl}/workers/ID removes it)`
            : ''),
      );
  }
  return [...new Set(places)].join(' and ');
}

function unitOf(host: string, d: DiscoveredUnit): FleetUnit {
  return {
    host,
    unit: d.unit,
    nodeRank: d.server?.nodeRank ?? 0,
    nnodes: d.server?.nnodes ?? 1,
    ...(d.service?.gpus ? { gpus: d.service.gpus } : {}),
    ...(d.activeState ? { activeState: d.activeState } : {}),
  };
}
