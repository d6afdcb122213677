// `pd-console status` on a deployment the app has open: waits on the app's observations until every reachable
// service has answered and every scraped one has two scrapes at least --wait apart (rates need two), builds the
// one report (status-report.ts) with each service's condition and headline figures from the app's signal store,
// and prints it as JSON or as text (status-text.ts). Exit status 0 when every service serves, a router leads to
// them and every worker is placed; 3 otherwise.
import type { App } from '../compose';
import { serviceId, type DeploymentSummary, type ServiceObservation } from '@shared/domain';
import { serviceCondition, type UnitCondition } from '@shared/unit-condition';
import { fleetOfServices } from '../core/deployment/fleet-config';
import { hasWorkerGroups } from '@shared/fleet';
import { awaitFleetReading, FLEET_READING_TIMEOUT_MS } from './fleet-reading';
import { fleetReport, type ServiceFigures, type StatusReport } from './status-report';
import { NO_LINK_TEXT, statusText } from './status-text';
import { LinkWatch } from './link-status';
import { watchScrapes } from './scrape-watch';
import { headlineOf } from './headline';
import { serverEraOf } from './era-of';
import type { CliIo } from './cli-io';

/** How long a status waits for every service's journal (the evidence of its condition) before printing without. */
const FIRST_ANSWERS_MS = 10_000;

export async function statusCommand(
  app: App,
  summary: DeploymentSummary,
  opts: { json: boolean; simulated: boolean; waitMs: number },
  io: CliIo,
): Promise<number> {
  const core = app.core;
  const id = summary.deployment.id;
  const config = summary.deployment.services;
  const fleet = summary.fleet ?? fleetOfServices(summary.host.id, config).fleet;
  const link = new LinkWatch(core, id);
  const scrapes = watchScrapes(core, id);
  try {
    const start = core.now;
    // The service ids the scrapes are kept by: the observation's, else its config's (same order).
    const sid = (s: ServiceObservation, i: number): string => serviceId({ ...s, id: s.id ?? config[i]?.id });
    const ready = (services: readonly ServiceObservation[]): boolean =>
      services.every((s, i) => {
        const span = scrapes.span(sid(s, i));
        const rated = !s.metrics?.ok || (span.count >= 2 && span.lastMs! - span.firstMs! >= opts.waitMs);
        return rated && (!s.systemd || s.evidence !== undefined || core.now >= start + FIRST_ANSWERS_MS);
      });
    const { reading, observation, late } = await awaitFleetReading(
      core,
      id,
      config,
      FLEET_READING_TIMEOUT_MS + opts.waitMs,
      (o) => ready(o.services),
    );
    // Said on stderr so that --json stays one document; what they lack is in their entries too.
    if (late.length > 0)
      io.stderr(
        `pd-console status: still waiting, printed without a first answer from: ${late.join('; ')}\n`,
      );
    // Asked after the wait: the figures below are then read in one go, their values and scrape times from the
    // same scrapes (the dashboard ingested every scrape before the observation that followed it was pushed).
    const { verdict } = await app.handlers.getDashboard({ deploymentId: id });
    const values = app.dashboard.store.latest(id);
    const notExposed = app.dashboard.store.notExposed(id);
    const observed = observation?.services ?? [];
    const figures = new Map<string, ServiceFigures>();
    observed.forEach((s, i) => {
      const span = scrapes.span(sid(s, i));
      const last = scrapes.last(sid(s, i));
      const h = headlineOf(s, {
        values,
        notExposed,
        scrapes: span.count,
        metricsConfigured: !!config[i]?.metricsUrl,
        era: last ? serverEraOf(new Set(last.families.map((f) => f.name))) : null,
      });
      figures.set(sid(s, i), {
        condition: conditionOf(
          s,
          observed,
          core.now,
          !link.up && (s.hostId ?? fleet.origin) === fleet.origin,
        ),
        signals: h.signals,
        ...(Object.keys(h.why).length > 0 ? { signalsWhy: h.why } : {}),
        scrapes: {
          ...span,
          ...(s.metrics && !s.metrics.ok
            ? { error: s.metrics.error + (s.metrics.hint ? ` — ${s.metrics.hint}` : '') }
            : {}),
        },
        ...(s.role !== 'router' && !s.kv && s.kvMissing ? { kvMissing: s.kvMissing.reason } : {}),
      });
    });
    const linkReport = link.report();
    const report: StatusReport = {
      simulated: opts.simulated,
      connection: linkReport.state,
      hostLabel: summary.host.label,
      deployment: summary.deployment.name,
      link: linkReport,
      ...fleetReport(fleet, reading, { order: config.map(serviceId), figures: (k) => figures.get(k) }),
      verdict,
    };
    io.stdout(
      opts.json
        ? JSON.stringify(report, null, 2) + '\n'
        : statusText(report, { now: core.now, grouped: hasWorkerGroups(config) }),
    );
    const serving = report.services.every(
      (s) =>
        (s.condition ? s.condition.kind === 'serving' : s.activeState === 'active') &&
        (s.units ?? []).every((u) => u.activeState === 'active'),
    );
    // No router means nothing is served, whatever the units' states; an unplaced worker is not watched.
    return link.up && serving && report.unplaced.length === 0 && report.routers.length > 0 ? 0 : 3;
  } finally {
    scrapes.dispose();
    link.dispose();
  }
}

/** A service's condition as systemd, /health and its journal tell it; unknown while its host has no link. */
function conditionOf(
  s: ServiceObservation,
  all: readonly ServiceObservation[],
  now: number,
  originDown: boolean,
): UnitCondition {
  const unreachable = !s.systemd && !!s.systemdError?.startsWith('unreachable: ');
  if (originDown || unreachable)
    return { kind: 'unknown', tone: 'muted', text: NO_LINK_TEXT, since: null, restarts: 0 };
  return serviceCondition(s, all, now);
}
