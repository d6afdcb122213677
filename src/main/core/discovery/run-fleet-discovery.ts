// Runs fleet discovery over SSH: connect to the host the operator named, read its units (run-discovery.ts),
// ask each router there for /workers, place every worker URL's host (loopback or the host's own addresses,
// else the ssh alias that resolves to it), connect to each of those hosts once (the link pool) and read their
// units, then hand everything to the pure assembleFleet(); a multi-node worker's other nodes are looked for
// among the peers of its --dist-init-addr (node-peers.ts). A host that cannot be reached does not stop the
// rest: its workers say "unreachable: …".
import { isIP } from 'node:net';
import type { HostConfig } from '@shared/domain';
import type { Fleet, FleetHost, WorkersApiFailure } from '@shared/fleet';
import type { AliasIndex } from '../ssh/alias-addresses';
import type { HostLinkPool } from '../ssh/host-link-pool';
import { HttpError, httpGet } from '../ssh/http-agent';
import { parseHostSpec } from '@shared/host-spec';
import type { DiscoveredUnit, DiscoveryInput, DiscoveryResult } from './discover';
import { assembleFleet, placeHost, type HostScan, type Placement, type RouterScan } from './fleet';
import { parseWorkersAnswer, routerWorkerList, WorkersAnswerError } from './router-workers';
import { runDiscovery } from './run-discovery';
import { isLoopbackHost, parseWorkerUrl } from '@shared/worker-url';
import { distInitPort, nodePeersCommand, parseSsPeers } from './node-peers';

export interface FleetDiscoveryDeps {
  pool: HostLinkPool;
  /** The operator's ssh aliases with their resolved addresses (ssh/alias-addresses.ts); all() only when needed. */
  aliases: AliasIndex;
  /** All addresses a host name resolves to locally ([] when it does not). */
  lookupAll: (name: string) => Promise<string[]>;
  /** Named in fixes: "add `Host …` to ~/.ssh/config". */
  configFile: string;
}

export interface FleetDiscovery {
  fleet: Fleet;
  /** Each host's single-host discovery, with its diagnostics. */
  perHost: Map<string, DiscoveryResult>;
}

/** `hostname -I` (Linux): every address of the host, so a router's URL naming a private address matches. */
const HOST_ADDRESSES_COMMAND = 'hostname -I 2>/dev/null || true';

export async function discoverFleet(
  origin: HostConfig,
  deps: FleetDiscoveryDeps,
  opts: { addHosts?: HostConfig[]; chosen?: (hostId: string) => DiscoveryInput['chosen'] } = {},
): Promise<FleetDiscovery> {
  const perHost = new Map<string, DiscoveryResult>();
  const aliases = deps.aliases;

  // The origin failing is the command failing: there is nothing to follow.
  const conn = await deps.pool.get(origin);
  const originResult = await runDiscovery(conn, origin.id, origin.label, opts.chosen?.(origin.id));
  perHost.set(origin.id, originResult);
  const originAddresses = await addressesOf(origin, conn, aliases, deps.lookupAll);
  const scans: HostScan[] = [
    { host: origin.id, via: 'origin', addresses: originAddresses, found: originResult.found },
  ];

  const routers: RouterScan[] = [];
  for (const unit of originResult.found.filter((d) => d.kind === 'router')) {
    const scan: RouterScan = { host: origin.id, unit };
    const api = unit.service?.apiUrl;
    // The mini load balancer has no /workers; its flags are the whole list.
    if (api && unit.router?.flavour !== 'mini_lb') {
      const failed = (failure: WorkersApiFailure, what: string) => {
        scan.workersApiFailure = failure;
        scan.workersApiError = `${what}; ${usedInstead(unit)}`;
      };
      try {
        const res = await httpGet(conn.httpAgent(), `${api}/workers`, {
          timeoutMs: WORKERS_TIMEOUT_MS,
          maxBytes: WORKERS_MAX_BYTES,
        });
        if (res.status !== 200)
          failed(
            res.status === 404 ? 'no-worker-list' : 'http-status',
            `${api}/workers answered HTTP ${res.status}` +
              (res.status === 404 ? ' (a router before sglang-router 0.2.0 has no worker list)' : ''),
          );
        else scan.workersApi = parseWorkersAnswer(res.body, String(res.headers['content-type'] ?? ''));
      } catch (err) {
        const e = err as Error;
        if (e instanceof WorkersAnswerError) failed(e.failure, `${api}${e.message}`);
        else if (e instanceof HttpError)
          failed(
            e.code === 'timeout'
              ? 'too-slow'
              : e.code === 'too-large'
                ? 'too-large'
                : e.code === 'encoding'
                  ? 'unreadable'
                  : 'unreachable',
            e.message,
          );
        else failed('unreachable', `${api}/workers: ${e.message}`);
      }
    }
    routers.push(scan);
  }

  const scanHost = async (host: HostConfig, via: FleetHost['via']): Promise<void> => {
    if (scans.some((s) => s.host === host.id)) return;
    const entry: HostScan = { host: host.id, via, addresses: [] };
    scans.push(entry);
    try {
      const c = await deps.pool.get(host);
      const r = await runDiscovery(c, host.id, host.label, opts.chosen?.(host.id));
      perHost.set(host.id, r);
      entry.found = r.found;
      entry.addresses = await addressesOf(host, c, aliases, deps.lookupAll);
    } catch (err) {
      entry.error = (err as Error).message;
      entry.addresses = await addressesOf(host, null, aliases, deps.lookupAll);
    }
  };
  await Promise.all((opts.addHosts ?? []).map((h) => scanHost(h, 'added')));

  // The hosts of the workers each router's list takes (bounded: see MAX_ROUTER_WORKERS), each placed once.
  const urlHosts = new Set<string>();
  for (const r of routers) {
    if (!r.unit.router) continue;
    for (const w of routerWorkerList(r.unit.router, r.workersApi).workers) {
      const ep = parseWorkerUrl(w.url);
      if (!('error' in ep)) urlHosts.add(ep.host);
    }
  }
  const placements = new Map<string, Placement>();
  for (const h of urlHosts) {
    const local = isLoopbackHost(h) || originAddresses.includes(h);
    const known = scans.filter((s) => s.host !== origin.id);
    const urlAddresses = isIP(h) ? [] : await deps.lookupAll(h);
    placements.set(
      h,
      local
        ? { host: origin.id }
        : placeHost(
            h,
            { host: origin.id, addresses: originAddresses },
            known,
            await aliases.all(),
            urlAddresses,
            deps.configFile,
          ),
    );
  }
  const toScan = new Set<string>();
  for (const p of placements.values()) if ('host' in p && p.host !== origin.id) toScan.add(p.host);
  await Promise.all([...toScan].map((alias) => scanHost(hostConfigOf(alias), 'alias')));

  const assemble = () =>
    assembleFleet({
      origin: origin.id,
      scans,
      routers,
      placement: (h) =>
        placements.get(h) ?? {
          code: 'bad-url',
          reason: `${h} was not considered`,
          fix: 'run discovery again',
        },
    });
  let fleet = assemble();

  // Node ranks ≥ 1 of a multi-node worker are on hosts no router URL names: rank 0's host knows them as the
  // peers connected to its --dist-init-addr port.
  const peerNotes = new Map<string, string>();
  let foundPeers = false;
  for (const w of fleet.workers) {
    const port = w.distInitAddr ? distInitPort(w.distInitAddr) : undefined;
    if (!w.missingRanks?.length || port === undefined) continue;
    let peers: string[];
    try {
      const c = await deps.pool.get(hostConfigOf(w.host));
      const r = await c.exec(nodePeersCommand(port), { timeoutMs: 5000 });
      if (r.exitCode !== 0) continue;
      peers = parseSsPeers(r.stdout);
    } catch {
      continue; // no `ss` there: the worker's note already says how to add the host by hand
    }
    const own = scans.find((s) => s.host === w.host)?.addresses ?? [];
    const noAlias: string[] = [];
    for (const p of peers) {
      if (isLoopbackHost(p) || own.includes(p) || scans.some((s) => s.addresses.includes(p))) continue;
      const hit = (await aliases.all()).find((a) => !a.problem && a.addresses.includes(p));
      if (!hit) noAlias.push(p);
      else {
        await scanHost(hostConfigOf(hit.alias), 'peer');
        foundPeers = true;
      }
    }
    if (noAlias.length > 0)
      peerNotes.set(
        w.url,
        `its other node(s) connect to ${w.distInitAddr} from ${noAlias.join(', ')}, which no ssh alias resolves to — ` +
          `add \`Host <name>\` / \`HostName ${noAlias[0]}\` to ${deps.configFile}`,
      );
  }
  if (foundPeers) fleet = assemble();
  for (const w of fleet.workers) {
    const note = peerNotes.get(w.url);
    if (note && w.missingRanks?.length) w.notes.push(note);
  }
  return { fleet, perHost };
}

/** Bounds of a /workers answer: 1,024 smg entries are ~0.5 MB; a list that needs more is not one to follow. */
const WORKERS_TIMEOUT_MS = 5000;
const WORKERS_MAX_BYTES = 4 << 20;

/** What discovery goes by when a router's /workers cannot be used: its ExecStart flags, and how many they name. */
function usedInstead(unit: DiscoveredUnit): string {
  const f = unit.router;
  const counts = [
    [f?.prefill.length ?? 0, '--prefill'],
    [f?.decode.length ?? 0, '--decode'],
    [f?.workerUrls.length ?? 0, '--worker-urls'],
  ] as const;
  const named = counts.filter(([n]) => n > 0).map(([n, flag]) => `${n} ${flag}`);
  return named.length > 0
    ? `using the workers in ExecStart of ${unit.unit} instead (${named.join(', ')}); workers registered at run time are not seen`
    : `ExecStart of ${unit.unit} names no workers either, so none of this router's workers is known`;
}

function hostConfigOf(spec: string): HostConfig {
  return parseHostSpec(spec) ?? { id: spec, label: spec, kind: 'ssh', alias: spec };
}

async function addressesOf(
  host: HostConfig,
  conn: { exec: (cmd: string, o?: { timeoutMs?: number }) => Promise<{ stdout: string }> } | null,
  aliases: AliasIndex,
  lookupAll: (name: string) => Promise<string[]>,
): Promise<string[]> {
  const out = new Set<string>();
  if (host.alias) {
    for (const x of (await aliases.one(host.alias)).addresses) out.add(x);
  }
  if (host.hostname) {
    out.add(host.hostname.toLowerCase());
    if (!isIP(host.hostname)) for (const x of await lookupAll(host.hostname)) out.add(x);
  }
  if (conn) {
    try {
      const r = await conn.exec(HOST_ADDRESSES_COMMAND, { timeoutMs: 5000 });
      for (const w of r.stdout.split(/\s+/)) if (isIP(w)) out.add(w.toLowerCase());
    } catch {
      // Not Linux, or no `hostname`: the configured addresses are all there is.
    }
  }
  return [...out];
}
