// Where the roll service finds what a roll needs of an open deployment: its workers, one link and one host
// config per host, its clock: the workers fleet discovery found (multi-node and DP-aware workers as one each), every reachable host's link,
// and the monitors' journal tails; workers it could not place or reach are named as left out of the roll.
import type { HostConfig, ServiceConfig } from '@shared/domain';
import type { DeploymentLookup } from '../deployment/deployment-registry';
import type { Clock } from '../clock';
import type { RollContext } from '../actions/roll-session';
import type { SshConnection } from '../ssh/connection';
import type { UnitJournalTail } from '../journal/unit-tail';
import type { ScrapeFeed } from '../monitor/scrape-feed';
import { rollWorkersOfFleet, withBootstrapPorts } from '../actions/roll-fleet';

export type RollDeploymentContext = Omit<RollContext, 'settings' | 'pollMs' | 'minRealGapMs'>;

export interface RollDeployments {
  /** The deployment as a roll sees it; rejects with an ApiError when it is not open. */
  contextOf(deploymentId: string): Promise<RollDeploymentContext>;
  /** The hosts whose link is down now (a roll is not started over a dropped link). */
  linksDown(deploymentId: string): string[];
  /** The deployment's services (the ids its events name workers by); undefined once it is closed. */
  servicesOf(deploymentId: string): readonly ServiceConfig[] | undefined;
}

/** Reads each roll's deployment from the registry (the core's open deployments, or a test's fakes). */
export function rollDeploymentsOf(
  deployments: Pick<DeploymentLookup, 'resolve' | 'live'>,
  clockFor: (host: HostConfig) => Clock,
  scrapesOf: (deploymentId: string) => ScrapeFeed,
): RollDeployments {
  return {
    async contextOf(deploymentId) {
      const d = deployments.live(deploymentId, 'a roll');
      const journalOf = (hostId: string, unit: string): UnitJournalTail | undefined => {
        try {
          return d.journalTail(unit, hostId);
        } catch {
          // No monitor there (unreachable host): the roll reads that unit's journal itself.
          return undefined;
        }
      };
      const { workers: found, left } = rollWorkersOfFleet(d.fleet);
      const links = new Map<string, SshConnection>();
      const hosts = new Map<string, HostConfig>();
      for (const { host } of d.hostStates()) {
        hosts.set(host.id, host);
        try {
          links.set(host.id, d.connection(host.id));
        } catch {
          // A host without a link: its workers are already among `left` (unreachable).
        }
      }
      // Units are named by their host's label ("demo GPU host"), as every other message names a host.
      const labelled = found
        .filter((w) => w.units.every((u) => links.has(u.hostId)))
        .map((w) => ({
          ...w,
          units: w.units.map((u) => ({ ...u, hostLabel: hosts.get(u.hostId)?.label ?? u.hostLabel })),
        }));
      const workers = await withBootstrapPorts(labelled, links);
      return {
        deploymentId,
        workers,
        links,
        hosts,
        clock: clockFor(d.host),
        journalOf,
        scrapes: scrapesOf(deploymentId),
        notes: left.map((l) => `not part of the roll: ${l}`),
      };
    },
    linksDown(deploymentId) {
      return deployments
        .resolve(deploymentId)
        .hostStates()
        .filter((h) => h.connection.state !== 'connected')
        .map((h) => h.host.label);
    },
    servicesOf(deploymentId) {
      try {
        return deployments.resolve(deploymentId).config.services;
      } catch {
        // Closed while its roll ran: the event that asks goes nowhere either (RollService.record).
        return undefined;
      }
    },
  };
}
