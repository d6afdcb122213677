// The operator's Prometheus as API: find the one that watches a deployment (an engine unit on one of its hosts,
// or the URL the operator gave), ask it what it scrapes and keeps, say what it misses with the lines to add,
// and hand out the generated prometheus.yml and Grafana dashboard. History (h-promhist) takes its PromApi from
// clientFor().
import type { DeploymentConfig, HostConfig } from '@shared/domain';
import type {
  ExportedFile,
  PrometheusEndpointStatus,
  PrometheusFoundUnit,
  PrometheusRequests,
  PrometheusSourceArgs,
  PrometheusStatus,
} from '@shared/api/prometheus';
import type { ServiceHost } from './service-host';
import type { Deployment } from '../deployment/deployment';
import { memorySecrets, type SecretStore } from '../ssh/prompts';
import { discoverPromUnits } from '../prometheus/discover-run';
import { PromHttpClient, PromRequestError, type PromAuth } from '../prometheus/http-client';
import { preparePromSource } from '../prometheus/prom-source';
import type { PromApi, PromTarget } from '../prometheus/prom-api';
import { coverageOf, type EndpointCoverage } from '../prometheus/coverage';
import { targetsFromConfigYaml } from '../prometheus/discover-config';
import { readEnvFileCommand } from '../discovery/commands';
import {
  endpointsOf,
  labelHost,
  prometheusConfigYaml,
  runAndInstall,
  spansHosts,
  type ConfigFileOptions,
  type ScrapeEndpoint,
} from '../prometheus/export-config';
import { grafanaDashboardJson } from '../prometheus/export-dashboard';

interface Source {
  url: string;
  viaHost?: string;
  auth?: PromAuth;
  caFile?: string;
  warnings: string[];
}

interface Chosen {
  client: PromApi;
  label: string;
  kind: 'unit' | 'url';
  url: string;
  viaHost?: string;
  promHostId?: string;
  engine?: PrometheusFoundUnit['engine'];
  auth?: PromAuth['kind'];
  caFile?: string;
  warnings?: string[];
}

/** What the Prometheus service is given: the deployments (hosts and links), closes, the time of a status. */
export type PrometheusHost = Pick<ServiceHost, 'deployments' | 'hooks' | 'clock'>;

/**
 * How long a look for Prometheus units on the hosts holds. A look is an SSH round of every host (two or more
 * exec channels each): the charts' older history asked it once per chart, and the Metrics page's panel at every
 * open. "Check again" in the panel looks at once; a URL the operator gives is used at once.
 */
const LOOK_TTL_MS = 30_000;

interface Look {
  found: PrometheusFoundUnit[];
  hostErrors: PrometheusStatus['hostErrors'];
}

export class PrometheusService {
  private readonly sources = new Map<string, Source>();
  private readonly clients = new Map<string, Chosen>();
  /** The latest look per deployment, under way or done (`at`: when it started); shared by every caller. */
  private readonly looks = new Map<string, { at: number; look: Promise<Look> }>();
  private readonly secrets: SecretStore;

  constructor(
    private readonly core: PrometheusHost,
    opts: { secrets?: SecretStore } = {},
  ) {
    this.secrets = opts.secrets ?? memorySecrets();
    core.hooks.on('closed', ({ deploymentId }) => this.forget(deploymentId));
  }

  handlers(): PrometheusRequests {
    return {
      // Looking for a deployment's Prometheus needs its links: a recording is refused by the registry's live().
      getPrometheusStatus: async (a) => this.status(a.deploymentId, a.fresh === true),
      setPrometheusSource: async (a) => this.setSource(a),
      exportPrometheusConfig: async (a) => this.exportConfig(a.deploymentId),
      exportGrafanaDashboard: async (a) => this.exportDashboard(a.deploymentId),
    };
  }

  dispose(): void {
    for (const id of [...this.clients.keys()]) this.forget(id);
  }

  /** The Prometheus of a deployment (found or given), or null when there is none. */
  async clientFor(deploymentId: string): Promise<PromApi | null> {
    const cached = this.clients.get(deploymentId);
    if (cached) return cached.client;
    const { chosen } = await this.choose(deploymentId);
    return chosen?.client ?? null;
  }

  async setSource(a: PrometheusSourceArgs): Promise<PrometheusStatus> {
    this.live(a.deploymentId);
    this.forget(a.deploymentId);
    if (a.url === null) {
      this.sources.delete(a.deploymentId);
      return this.status(a.deploymentId);
    }
    if (a.viaHost !== undefined && !this.hosts(a.deploymentId).some((h) => h.id === a.viaHost))
      throw new Error(
        `host ${a.viaHost} is not part of this deployment; pick one of its hosts to tunnel through`,
      );
    const src = await preparePromSource(
      { url: a.url, ...(a.auth ? { auth: a.auth } : {}), ...(a.caFile ? { caFile: a.caFile } : {}) },
      this.secrets,
    );
    this.sources.set(a.deploymentId, {
      url: src.url,
      ...(a.viaHost ? { viaHost: a.viaHost } : {}),
      ...(src.auth ? { auth: src.auth } : {}),
      ...(src.caFile ? { caFile: src.caFile } : {}),
      warnings: src.warnings,
    });
    return this.status(a.deploymentId);
  }

  /** `fresh`: look on the hosts now, not at the look of the last 30 s (the panel's "Check again"). */
  async status(deploymentId: string, fresh = false): Promise<PrometheusStatus> {
    const { config: deployment, host } = this.core.deployments.resolve(deploymentId);
    const hosts = this.hosts(deploymentId);
    const labels = Object.fromEntries(hosts.map((h) => [h.id, h.label]));
    const endpoints = endpointsOf(deployment, labels);
    const { chosen, found, hostErrors } = await this.choose(deploymentId, fresh);
    const base = {
      deploymentId,
      at: this.core.clock.now(),
      found,
      hostErrors,
      suggestedConfig: this.configText(
        deploymentId,
        deployment,
        endpoints,
        chosen?.promHostId ?? runHostOf(deployment, host),
        `prometheus-${fileSlug(host)}.yml`,
      ),
    };
    if (!chosen) {
      return {
        ...base,
        source: null,
        retentionS: null,
        endpoints: endpoints.map((ep) => ({
          ...dto(ep),
          scraped: false,
          message: `${ep.id} ${ep.metricsUrl}: no Prometheus found to scrape it`,
        })),
      };
    }
    const source: PrometheusStatus['source'] = {
      kind: chosen.kind,
      label: chosen.label,
      url: chosen.url,
      ...(chosen.viaHost ? { viaHost: labels[chosen.viaHost] ?? chosen.viaHost } : {}),
      ...(chosen.engine ? { engine: chosen.engine } : {}),
      ...(chosen.auth ? { auth: chosen.auth } : {}),
      ...(chosen.caFile ? { caFile: chosen.caFile } : {}),
      ...(chosen.warnings?.length ? { warnings: chosen.warnings } : {}),
    };
    let targets: PromTarget[];
    try {
      targets = await chosen.client.targets();
    } catch (e) {
      const f: { code: string; message: string; fix?: string } =
        e instanceof PromRequestError ? e.failure : { code: 'unreachable', message: (e as Error).message };
      const problem = { code: f.code, message: f.message, ...(f.fix ? { fix: f.fix } : {}) };
      const fromFile = await this.configFileTargets(deploymentId, chosen, found);
      if (fromFile) {
        const coverage = coverageOf({
          endpoints,
          targets: fromFile.targets,
          promLabel: chosen.label,
          fromConfigFile: `${fromFile.file} on ${labels[chosen.promHostId!] ?? chosen.promHostId}`,
          ...(chosen.promHostId !== undefined ? { promHostId: chosen.promHostId } : {}),
        });
        return { ...base, source, retentionS: null, problem, endpoints: coverage.map(toDto) };
      }
      return {
        ...base,
        source,
        retentionS: null,
        problem,
        endpoints: endpoints.map((ep) => ({
          ...dto(ep),
          scraped: false,
          message: `${ep.id} ${ep.metricsUrl}: unknown — ${chosen.label} could not be asked`,
        })),
      };
    }
    // vmagent keeps nothing itself (it forwards by remote write): no retention to ask for.
    const retentionS =
      chosen.engine === 'vmagent' ? null : await chosen.client.retentionS().catch(() => null);
    const coverage = coverageOf({
      endpoints,
      targets,
      promLabel: chosen.label,
      ...(chosen.promHostId !== undefined ? { promHostId: chosen.promHostId } : {}),
    });
    return {
      ...base,
      source,
      retentionS,
      endpoints: coverage.map(toDto),
    };
  }

  exportConfig(deploymentId: string): ExportedFile {
    const { config: deployment, host } = this.core.deployments.resolve(deploymentId);
    const labels = Object.fromEntries(this.hosts(deploymentId).map((h) => [h.id, h.label]));
    const runOn = runHostOf(deployment, host);
    const fileName = `prometheus-${fileSlug(host)}.yml`;
    const endpoints = endpointsOf(deployment, labels);
    const opts = this.fileOptions(deploymentId, runOn, fileName);
    return {
      fileName,
      mimeType: 'application/yaml',
      text: this.configText(deploymentId, deployment, endpoints, runOn, fileName),
      notes: runAndInstall(endpoints, { ...opts, network: spansHosts(endpoints) }),
    };
  }

  /** Where the generated config runs and how its hosts are reached (a fleet's hosts' own addresses). */
  private fileOptions(deploymentId: string, promHostId: string, fileName: string): ConfigFileOptions {
    const d = this.core.deployments.resolve(deploymentId);
    const hostAddresses = Object.fromEntries((d.fleet?.hosts ?? []).map((h) => [h.id, h.addresses]));
    const promHost = this.hosts(deploymentId).find((h) => h.id === promHostId);
    // A name the commands can use (`gpu-a`), not a description ("demo GPU host (simulated)").
    const promHostLabel = promHost
      ? labelHost({ hostId: promHost.id, hostLabel: promHost.label })
      : undefined;
    return { promHostId, hostAddresses, fileName, ...(promHostLabel ? { promHostLabel } : {}) };
  }

  exportDashboard(deploymentId: string): ExportedFile {
    const { config: deployment, host, latest } = this.core.deployments.resolve(deploymentId);
    return {
      fileName: `grafana-${fileSlug(host)}.json`,
      mimeType: 'application/json',
      text: `${JSON.stringify(grafanaDashboardJson({ title: `${deployment.name} (PD Console)`, latest }), null, 2)}\n`,
    };
  }

  private configText(
    deploymentId: string,
    deployment: DeploymentConfig,
    endpoints: ScrapeEndpoint[],
    promHostId: string,
    fileName: string,
  ): string {
    return prometheusConfigYaml(endpoints, {
      ...this.fileOptions(deploymentId, promHostId, fileName),
      header: `prometheus.yml for ${deployment.name}, generated by PD Console: one job per role, instance = host:port, worker = the worker's name`,
    });
  }

  /** The targets in the unit's config file, read over SSH, when the unit's Prometheus cannot be asked. */
  private async configFileTargets(
    deploymentId: string,
    chosen: Chosen,
    found: PrometheusFoundUnit[],
  ): Promise<{ file: string; targets: PromTarget[] } | null> {
    if (chosen.kind !== 'unit' || chosen.promHostId === undefined) return null;
    const unit = found.find((u) => u.hostId === chosen.promHostId && u.url === chosen.url);
    const file = unit?.configFile;
    if (!file || !file.startsWith('/')) return null;
    let cmd: string;
    try {
      cmd = readEnvFileCommand(file);
    } catch {
      return null;
    }
    const r = await this.live(deploymentId)
      .connection(chosen.promHostId)
      .exec(cmd, { timeoutMs: 10_000, maxBytes: 4 * 1024 * 1024 })
      .catch(() => null);
    if (!r || r.exitCode !== 0) return null;
    try {
      return { file, targets: targetsFromConfigYaml(r.stdout, file).targets };
    } catch {
      return null;
    }
  }

  /** The live deployment: its Prometheus is found and asked over its links. */
  private live(deploymentId: string): Deployment {
    return this.core.deployments.live(deploymentId, 'its Prometheus');
  }

  /** The hosts to look on for a Prometheus (a live deployment's). */
  private hosts(deploymentId: string): HostConfig[] {
    return this.live(deploymentId)
      .hostStates()
      .map((h) => h.host);
  }

  /** The Prometheus units on the deployment's hosts: the look of the last LOOK_TTL_MS unless `fresh`. */
  private look(deploymentId: string, fresh: boolean): Promise<Look> {
    const now = this.core.clock.now();
    const last = this.looks.get(deploymentId);
    if (last && !fresh && now - last.at < LOOK_TTL_MS) return last.look;
    const look = this.lookNow(deploymentId);
    this.looks.set(deploymentId, { at: now, look });
    // A look that failed as a whole (not one host: those are in hostErrors) is not kept.
    look.catch(() => {
      if (this.looks.get(deploymentId)?.look === look) this.looks.delete(deploymentId);
    });
    return look;
  }

  private async lookNow(deploymentId: string): Promise<Look> {
    const hosts = this.hosts(deploymentId);
    const found: PrometheusFoundUnit[] = [];
    const hostErrors: PrometheusStatus['hostErrors'] = [];
    for (const h of hosts) {
      try {
        const units = await discoverPromUnits(this.live(deploymentId).connection(h.id), h.id, h.label);
        for (const u of units)
          found.push({
            hostId: h.id,
            hostLabel: h.label,
            unit: u.unit,
            engine: u.engine,
            ...(u.activeState ? { activeState: u.activeState } : {}),
            listenAddress: u.listenAddress,
            url: u.url,
            configFile: u.configFile,
            notes: u.notes,
          });
      } catch (e) {
        hostErrors.push({ hostLabel: h.label, message: (e as Error).message });
      }
    }
    return { found, hostErrors };
  }

  private async choose(
    deploymentId: string,
    fresh = false,
  ): Promise<{
    chosen: Chosen | null;
    found: PrometheusFoundUnit[];
    hostErrors: PrometheusStatus['hostErrors'];
  }> {
    const labels = Object.fromEntries(this.hosts(deploymentId).map((h) => [h.id, h.label]));
    const given = this.sources.get(deploymentId);
    const { found, hostErrors } = await this.look(deploymentId, fresh);
    const cached = this.clients.get(deploymentId);
    if (cached) return { chosen: cached, found, hostErrors };
    let chosen: Chosen | null = null;
    if (given) {
      const via = given.viaHost;
      chosen = {
        client: this.client(
          deploymentId,
          given.url,
          `${given.url}${via ? ` via ${labels[via] ?? via}` : ''}`,
          via,
          given.auth,
          given.caFile,
        ),
        label: `${given.url}${via ? ` via ${labels[via] ?? via}` : ''}`,
        kind: 'url',
        url: given.url,
        ...(via ? { viaHost: via, promHostId: via } : {}),
        ...(given.auth ? { auth: given.auth.kind } : {}),
        ...(given.caFile ? { caFile: given.caFile } : {}),
        warnings: given.warnings,
      };
    } else {
      // An active unit wins; among those, a Prometheus (it answers history queries) over a vmagent.
      const rank = (u: PrometheusFoundUnit): number =>
        (u.activeState === 'active' ? 0 : 2) + (u.engine === 'vmagent' ? 1 : 0);
      const best = [...found].sort((a, b) => rank(a) - rank(b))[0];
      if (best) {
        const label = `${best.unit} on ${best.hostLabel}`;
        chosen = {
          client: this.client(deploymentId, best.url, label, best.hostId),
          label,
          kind: 'unit',
          url: best.url,
          viaHost: best.hostId,
          promHostId: best.hostId,
          engine: best.engine,
        };
      }
    }
    if (chosen) this.clients.set(deploymentId, chosen);
    return { chosen, found, hostErrors };
  }

  private client(
    deploymentId: string,
    url: string,
    label: string,
    viaHost?: string,
    auth?: PromAuth,
    caFile?: string,
  ): PromApi {
    return new PromHttpClient({
      baseUrl: url,
      label,
      ...(viaHost ? { agent: () => this.live(deploymentId).connection(viaHost).httpAgent() } : {}),
      ...(auth ? { auth } : {}),
      ...(caFile ? { caFile } : {}),
      secrets: this.secrets,
    });
  }

  private forget(deploymentId: string): void {
    this.clients.get(deploymentId)?.client.dispose();
    this.clients.delete(deploymentId);
    this.looks.delete(deploymentId);
  }
}

function toDto(c: EndpointCoverage): PrometheusEndpointStatus {
  return {
    ...dto(c.endpoint),
    scraped: c.scraped,
    ...(c.job !== undefined ? { job: c.job } : {}),
    ...(c.instance !== undefined ? { instance: c.instance } : {}),
    ...(c.intervalS !== undefined ? { intervalS: c.intervalS } : {}),
    ...(c.health !== undefined ? { health: c.health } : {}),
    ...(c.lastError ? { lastError: c.lastError } : {}),
    message: c.message,
    ...(c.addLines ? { addLines: c.addLines } : {}),
  };
}

function dto(ep: ScrapeEndpoint): {
  id: string;
  name: string;
  role: ScrapeEndpoint['role'];
  hostLabel: string;
  metricsUrl: string;
} {
  return { id: ep.id, name: ep.name, role: ep.role, hostLabel: ep.hostLabel, metricsUrl: ep.metricsUrl };
}

/** Where a generated config runs: the router's host, which reaches every worker at the address the router lists it under. */
function runHostOf(deployment: DeploymentConfig, host: HostConfig): string {
  return deployment.services.find((s) => s.role === 'router')?.hostId ?? host.id;
}

function fileSlug(host: HostConfig): string {
  return labelHost({ hostId: host.id, hostLabel: host.label }).replace(/[^A-Za-z0-9._-]+/g, '-');
}
