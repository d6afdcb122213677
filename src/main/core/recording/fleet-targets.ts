// How a fleet is named inside a recording (format 1.4, docs/recording-format.md §1.4). A fleet runs several
// workers of a role on several hosts, so a target or source is no longer a role alone: it is the key the live
// store files the worker's series under (`decode@decode-1`, signals/scoped-key.ts), a unit of a multi-node
// worker on another node adds its node rank (`decode@decode-2#1`), and each host's GPUs are a target of their
// own (`gpu@gpu-b`). A 1P1D host is a fleet of one, so its recording names `decode@decode-0` and `gpu@<host>` too.
// Type imports only: the writer runs where the @shared alias is not resolved (the crash tests' child process).
import type { ConnectionStatus, HostConfig, Role } from '@shared/domain';
import type { Fleet } from '@shared/fleet';

/** The header's `fleet` field (format 1.4): every host of the deployment and what discovery found. */
export interface RecordedFleet {
  /** Every host, origin first, as the deployment was opened (alias, address). */
  hosts: (Pick<HostConfig, 'id' | 'label' | 'kind'> & { alias?: string; hostname?: string })[];
  /** Routers' lists, workers with their units and node ranks, unplaced workers with their fix. */
  fleet: Fleet;
  /** Each host's link when the recording began; later changes are the `connection` events. */
  links: { host: string; connection: ConnectionStatus }[];
}

/** A worker's scrape target and the source of its node-rank-0 unit and health: `decode@decode-1`. */
export function workerTarget(role: Role, id: string): string {
  return `${role}@${id}`;
}

/** The source of one unit of a worker: node rank 0 is the worker's own, the others add `#rank`. */
export function unitSource(role: Role, id: string, nodeRank: number): string {
  return nodeRank === 0 ? workerTarget(role, id) : `${workerTarget(role, id)}#${nodeRank}`;
}

/** One host's nvidia-smi readings: `gpu@gpu-b`. */
export function hostGpuTarget(hostId: string): string {
  return `gpu@${hostId}`;
}

export interface ParsedSource {
  /** A role, `gpu` or `monitor`. */
  group: string;
  /** The worker (or host) id after `@`. */
  scope?: string;
  nodeRank: number;
}

/** Splits a fleet target or source (`decode@decode-2#1`) into its parts; a plain role has no scope. */
export function parseSource(source: string): ParsedSource {
  const at = source.indexOf('@');
  if (at < 0) return { group: source, nodeRank: 0 };
  const rest = source.slice(at + 1);
  const hash = rest.lastIndexOf('#');
  const rank = hash >= 0 ? Number(rest.slice(hash + 1)) : 0;
  return {
    group: source.slice(0, at),
    scope: hash >= 0 && Number.isInteger(rank) ? rest.slice(0, hash) : rest,
    nodeRank: hash >= 0 && Number.isInteger(rank) ? rank : 0,
  };
}
