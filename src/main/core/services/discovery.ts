// Discovery and the metrics inventory as API: what runs on the host, what is missing and why, and every
// metric family each endpoint serves.
import { serviceId, type Role } from '@shared/domain';
import type { DiscoveryReport, DiscoveryRequests, MetricsInventory } from '@shared/api/discovery';
import type { ServiceHost } from './service-host';
import type { Exposition } from '../probes/exposition/types';
import { runDiscovery } from '../discovery/run-discovery';
import type { DiscoveryResult } from '../discovery/discover';

/** What discovery is given: the deployments (each host's link), scrapes and closes, the time of a report. */
export type DiscoveryHost = Pick<ServiceHost, 'deployments' | 'hooks' | 'clock'>;

export class DiscoveryService {
  /** Latest parsed scrape per deployment and service (`serviceId`), for the inventory. */
  private readonly latest = new Map<string, { ts: number; exposition: Exposition }>();

  constructor(
    private readonly core: DiscoveryHost,
    /** The units the operator picked on a host (the settings file), by role. */
    private readonly chosen: (hostId: string) => Partial<Record<Role, string>> = () => ({}),
  ) {
    core.hooks.on('scrape', (e) =>
      this.latest.set(`${e.deploymentId}/${serviceId(e)}`, { ts: e.ts, exposition: e.exposition }),
    );
    core.hooks.on('closed', ({ deploymentId }) => {
      for (const k of [...this.latest.keys()]) if (k.startsWith(`${deploymentId}/`)) this.latest.delete(k);
    });
  }

  handlers(): DiscoveryRequests {
    return {
      discover: async (a) => this.discover(a.deploymentId),
      getMetricsInventory: async (a) => this.inventory(a.deploymentId, a.service),
    };
  }

  /** What runs on the deployment's host; on a fleet, on each of its hosts, each read over its own link. */
  async discover(deploymentId: string): Promise<DiscoveryReport> {
    // Asked over the hosts' links: a recording has none (the registry says so).
    const d = this.core.deployments.live(deploymentId, 'discovery');
    const { host } = d;
    const at = this.core.clock.now();
    const result = await runDiscovery(d.connection(), host.id, host.label, this.chosen(host.id));
    const origin = toReport(host.id, at, result);
    const others = await Promise.all(
      d
        .hostStates()
        .filter((h) => h.host.id !== host.id)
        .map(async ({ host: h }): Promise<DiscoveryReport> => {
          try {
            return toReport(
              h.id,
              at,
              await runDiscovery(d.connection(h.id), h.id, h.label, this.chosen(h.id)),
            );
          } catch (err) {
            // One host that cannot be read costs only its own report.
            return {
              hostId: h.id,
              at,
              proposal: { id: h.id, name: h.label, services: [] },
              found: [],
              diagnostics: [
                {
                  severity: 'error',
                  code: 'unreachable',
                  message: `${h.label}: ${(err as Error).message}`,
                  fix: 'Reconnect once the host is reachable, then discover again.',
                },
              ],
              needsOperatorChoice: [],
            };
          }
        }),
    );
    return { ...origin, hosts: [origin, ...others] };
  }

  inventory(deploymentId: string, service: string): MetricsInventory {
    // The last scrape's families are kept as a live deployment's scrapes arrive; a recording keeps none.
    const { config: deployment, latest } = this.core.deployments.live(deploymentId, 'the metrics inventory');
    const svc = deployment.services.find((s) => serviceId(s) === service);
    if (!svc)
      throw new Error(
        `no service "${service}" in ${deployment.name}: its services are ${deployment.services.map(serviceId).join(', ')}`,
      );
    const about = { service, role: svc.role, url: svc.metricsUrl };
    const got = this.latest.get(`${deploymentId}/${service}`);
    if (!got) {
      const m = latest?.services.find((s) => serviceId(s) === service)?.metrics;
      return {
        ...about,
        scrapedAt: null,
        families: [],
        unavailable: m && !m.ok ? `${m.error}${m.hint ? ` — ${m.hint}` : ''}` : 'no successful scrape yet',
      };
    }
    return {
      ...about,
      scrapedAt: got.ts,
      families: got.exposition.families.map((f) => ({
        name: f.name,
        type: f.type,
        help: f.help,
        series: countSeries(f.samples),
        lastValue: f.samples.length ? jsonNumber(f.samples[0].value) : null,
      })),
    };
  }
}

function toReport(hostId: string, at: number, r: DiscoveryResult): DiscoveryReport {
  return {
    hostId,
    at,
    proposal: r.deployment,
    found: r.found.map((f) => ({
      unit: f.unit,
      kind: f.kind,
      role: f.role,
      activeState: f.activeState,
      source: f.source,
      ...(f.pid !== undefined ? { pid: f.pid } : {}),
    })),
    diagnostics: r.diagnostics.map((d) => ({ ...d })),
    needsOperatorChoice: r.needsOperatorChoice,
  };
}

function countSeries(samples: Exposition['families'][number]['samples']): number {
  const keys = new Set<string>();
  for (const s of samples) {
    const { le: _le, quantile: _q, ...rest } = s.labels;
    keys.add(JSON.stringify(Object.entries(rest).sort()));
  }
  return keys.size;
}

function jsonNumber(v: number): number | string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return v;
}
