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
} from '@shared/fleet';
import type { AliasAddress } from '../ssh/alias-addresses';
import { connectHost, matchEndpoint, type DiscoveredUnit } from './discover';
import { routerWorkerList, sameWorkerUrl, type ApiWorker } from './router-workers';
import { isLoopbackHost, parseWorkerUrl, urlOnHost } from './worker-url';

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
  workersApiError?: string;
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
    return {
      id: `${r.host}/${r.unit.unit}`,
      host: r.host,
      unit: r.unit.unit,
      apiUrl: r.unit.service?.apiUrl ?? '',
      ...(r.unit.service?.metricsUrl ? { metricsUrl: r.unit.service.metricsUrl } : {}),
      ...(r.unit.activeState ? { activeState: r.unit.activeState } : {}),
      workers: flags ? routerWorkerList(flags, r.workersApi) : [],
      ...(r.workersApiError ? { workersApiError: r.workersApiError } : {}),
    };
  });
  const routerName = (ids: string[]): string =>
    routers.length === 1 ? 'the router' : ids.map((id) => `router ${id}`).join(' and ');

  // One entry per URL however many routers list it; each router keeps its own list.
  const listed: {
    url: string;
    role: WorkerRole;
    bootstrapPort?: number | null;
    listedBy: string[];
    notes: string[];
  }[] = [];
  for (const r of routers)
    for (const w of r.workers) {
      const have = listed.find((x) => sameWorkerUrl(x.url, w.url));
      if (!have) {
        listed.push({
          url: w.url,
          role: w.role,
          ...(w.bootstrapPort !== undefined ? { bootstrapPort: w.bootstrapPort } : {}),
          listedBy: [r.id],
          notes: [],
        });
        continue;
      }
      if (!have.listedBy.includes(r.id)) have.listedBy.push(r.id);
      if (have.role !== w.role)
        have.notes.push(`${r.id} lists it as ${w.role}, ${have.listedBy[0]} as ${have.role}`);
    }

  const workers: FleetWorker[] = [];
  const unplaced: UnplacedWorker[] = [];
  const used = new Set<DiscoveredUnit>();
  for (const l of listed) {
    const who = `${l.role} worker ${l.url} (listed by ${routerName(l.listedBy)})`;
    const ep = parseWorkerUrl(l.url);
    if ('error' in ep) {
      unplaced.push({
        url: l.url,
        role: l.role,
        listedBy: l.listedBy,
        code: 'bad-url',
        reason: `${who}: ${ep.error}`,
        fix: `correct the --${l.role === 'regular' ? 'worker-urls' : l.role} URL in the router's ExecStart`,
      });
      continue;
    }
    const place = input.placement(ep.host);
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
    const hit = servers.find((d) => matchEndpoint(l.url.replace(/@\d+$/, ''), d.server!).ok);
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
                  ? `SGLang units on ${place.host} serve ${servers.map((d) => `${d.unit} :${d.server!.port}`).join(', ')}; point the router at one of them or start the worker's unit`
                  : `start the worker's systemd unit on ${place.host}, or remove it from the router's list`,
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
