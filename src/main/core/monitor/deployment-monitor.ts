// Polls one host of a deployment over its SSH connection, each time its owner's round clock asks (`pollOnce`,
// core/deployment/live-deployment.ts), and turns what it sees into Observations:
// systemd state (one batched systemctl call), /metrics (every tick), /health (every few ticks; SGLang's
// /health may run a 1-token generation, so it is not hammered at scrape rate). It also reads the host's GPUs
// (nvidia-smi, every few seconds) and owns one journal tail per unit, all fed by one `journalctl --follow` of the
// host: every periodic read of the host is here, and the services that show, record or act on what it reads
// listen instead of asking the host themselves. systemctl and nvidia-smi go through the link's persistent shell,
// so steady state opens no SSH channel per read.
import { EventEmitter } from 'node:events';
import type http from 'node:http';
import type {
  DeploymentConfig,
  HealthResult,
  KvUsage,
  MetricsStatus,
  Observation,
  Role,
  ServiceConfig,
  ServiceLastSeen,
  ServiceObservation,
  UnitState,
} from '@shared/domain';
import { serviceId } from '@shared/domain';
import type { GpuStatus } from '@shared/contract';
import type { Clock, ClockTimer } from '../clock';
import type { SshConnection } from '../ssh/connection';
import { parseSystemctlShow, systemctlShowCommand } from '../probes/systemd';
import { scrapeMetrics } from '../probes/metrics';
import { checkHealth } from '../probes/health';
import type { Exposition } from '../probes/exposition/types';
import { SeriesCache } from '../probes/exposition/parser';
import { isKvMissing, serverInfoCapacity, type KvMissing } from '../probes/sglang/kv';
import { extractKv } from '../signals/evaluate/kv-usage';
import { httpGet } from '../ssh/http-agent';
import { readGpuStatus } from '../probes/gpu';
import { UnitJournalTail, type JournalSubscription } from '../journal/unit-tail';
import { UnitEvidenceTracker } from '../journal/unit-evidence';
import { HostJournalFollow } from '../journal/host-follow';

/** Polls a probe may go unanswered before the link is called stale (see the end of a poll). */
const STALE_AFTER_POLLS = 3;

export interface MonitorOptions {
  clock: Clock;
  /** The round's interval (ms) its owner polls at (`pollOnce`): it bounds a poll and dates a silent host. */
  intervalMs?: number;
  /** Health is checked every N ticks. */
  healthEveryTicks?: number;
  /** nvidia-smi interval (ms); its first read comes a little after the first poll. */
  gpuIntervalMs?: number;
}

export interface ScrapeEvent {
  ts: number;
  role: Role;
  /** The service's id (`decode-0`, `router`): the scope of its series keys. */
  id?: string;
  exposition: Exposition;
}

/** A node rank ≥ 1 unit of a multi-node worker on this host: it serves no HTTP, so only its systemd state is read. */
interface PeerUnit {
  service: ServiceConfig;
  unit: string;
}

interface Events {
  observation: [Observation];
  scrape: [ScrapeEvent];
  gpu: [GpuStatus];
}

const GPU_FIRST_READ_MS = 1500;
const GPU_INTERVAL_MS = 5000;

interface ServiceMemory {
  health?: HealthResult;
  /** MainPID when /health was last read: a Type=simple unit is active again seconds after a restart, while the
   * new process loads for minutes, so an answer of the old process must not stand for the new one. */
  healthPid?: number;
  /** The last poll that read the unit's systemd state: what an observation that cannot read it says was seen. */
  lastSeen?: ServiceLastSeen;
  capacityFromServerInfo?: number;
  /** MainPID when capacity was read: a restart may change the pool size. */
  capacityPid?: number;
  /** The last poll whose /metrics scrape succeeded. */
  lastScrapeOkAt?: number;
}

export class DeploymentMonitor extends EventEmitter<Events> {
  private running = false;
  private tick = 0;
  /** Per service, by serviceId(): several workers of one role may share a host. */
  private readonly memory = new Map<string, ServiceMemory>();
  // One series cache per scrape target (metrics URL), as Prometheus keeps one per scrape loop: each grows
  // with its own endpoint's series, and none evicts what another endpoint serves.
  private readonly seriesCaches = new Map<string, SeriesCache>();
  private latest: Observation | undefined;
  /** When a command or scrape last answered: where a stale link's silence began. */
  private lastAnsweredAt: number | null = null;
  private gpuTimer: ClockTimer | null = null;
  /** Stopped for good (the deployment closed): its journal tails are closed too. */
  private stopped = false;
  private readonly tails = new Map<string, UnitJournalTail>();
  private readonly follow: HostJournalFollow;
  /** Per unit: what its journal says about exits, errors and loads, read from the tail the unit has anyway. */
  private readonly evidence = new Map<string, { tracker: UnitEvidenceTracker; sub: JournalSubscription }>();

  constructor(
    readonly hostId: string,
    readonly deployment: DeploymentConfig,
    private readonly conn: SshConnection,
    private readonly opts: MonitorOptions,
  ) {
    super();
    this.follow = new HostJournalFollow({
      label: conn.label,
      exec: (cmd, o) => this.conn.exec(cmd, o),
      open: (cmd, handlers) => this.conn.openStream(cmd, handlers),
      isConnected: () => this.conn.isConnected,
      clock: opts.clock,
    });
  }

  get latestObservation(): Observation | undefined {
    return this.latest;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.watchEvidence();
    this.scheduleGpu(GPU_FIRST_READ_MS);
  }

  stop(): void {
    this.running = false;
    this.stopped = true;
    if (this.gpuTimer) this.opts.clock.clearTimeout(this.gpuTimer);
    this.gpuTimer = null;
    for (const e of this.evidence.values()) e.sub.dispose();
    this.evidence.clear();
    for (const t of this.tails.values()) t.close();
    this.tails.clear();
    this.follow.close();
  }

  /** Follows every unit's journal for its evidence (the backlog first, then each new line). */
  private watchEvidence(): void {
    const units = [
      ...this.deployment.services.filter((s) => s.hostId === this.hostId).map((s) => s.unit),
      ...this.peerUnits().map((p) => p.unit),
    ];
    for (const unit of new Set(units)) {
      if (this.evidence.has(unit)) continue;
      const tracker = new UnitEvidenceTracker(unit);
      const sub = this.journalTail(unit).subscribe(tracker);
      // The backlog is what the journal said before the monitor started: read it into the same evidence.
      sub.backlog.then(
        (lines) => tracker.backlog(lines),
        (err: Error) => tracker.onError(err.message),
      );
      this.evidence.set(unit, { tracker, sub });
    }
  }

  /** The one journal tail of a unit of this host; listeners subscribe to it (see UnitJournalTail). */
  journalTail(unit: string): UnitJournalTail {
    let tail = this.tails.get(unit);
    if (tail) return tail;
    if (
      !this.deployment.services.some((s) => s.unit === unit && s.hostId === this.hostId) &&
      !this.peerUnits().some((p) => p.unit === unit)
    )
      throw new Error(`${unit} is not a unit of ${this.deployment.name} on ${this.conn.label}`);
    if (this.stopped) throw new Error(`the monitor of ${this.deployment.name} has stopped`);
    tail = new UnitJournalTail({
      unit,
      exec: (cmd, o) => this.conn.exec(cmd, o),
      isConnected: () => this.conn.isConnected,
      clock: this.opts.clock,
      feed: this.follow,
    });
    this.tails.set(unit, tail);
    return tail;
  }

  private scheduleGpu(delay: number): void {
    if (!this.running) return;
    this.gpuTimer = this.opts.clock.setTimeout(() => void this.pollGpu(), delay);
  }

  private async pollGpu(): Promise<void> {
    this.gpuTimer = null;
    if (!this.running) return;
    const ts = this.opts.clock.now();
    const status: GpuStatus = this.conn.isConnected
      ? await readGpuStatus((cmd, o) => this.conn.execInShell(cmd, o), this.conn.label, ts)
      : {
          ts,
          gpus: [],
          error: `GPU readings unavailable: no connection to ${this.conn.label}`,
          hint: 'They resume when the connection does.',
        };
    if (!this.running) return;
    this.emit('gpu', status);
    this.scheduleGpu(this.opts.gpuIntervalMs ?? GPU_INTERVAL_MS);
  }

  /** Stops polling for good and frees every target's parse state (a scrape still in flight parses uncached). */
  dispose(): void {
    this.stop();
    for (const cache of this.seriesCaches.values()) cache.dispose();
    this.seriesCaches.clear();
  }

  /** The series cache of the target at `url`, made on its first scrape. */
  private seriesCacheFor(url: string): SeriesCache {
    let cache = this.seriesCaches.get(url);
    if (cache === undefined) {
      cache = new SeriesCache();
      this.seriesCaches.set(url, cache);
    }
    return cache;
  }

  /** Series held for the target at `url` (tests of the bound). */
  seriesCached(url: string): number {
    return this.seriesCaches.get(url)?.size ?? 0;
  }

  /** Run one poll now: the round clock's tick. */
  async pollOnce(): Promise<Observation> {
    const obs = await this.poll();
    this.latest = obs;
    this.emit('observation', obs);
    return obs;
  }

  private async poll(): Promise<Observation> {
    const { clock } = this.opts;
    const ts = clock.now();
    this.tick++;
    const services = this.deployment.services.filter((s) => s.hostId === this.hostId);
    const peers = this.peerUnits();
    if (!this.conn.isConnected) {
      return {
        deploymentId: this.deployment.id,
        hostId: this.hostId,
        ts,
        services: [
          ...services.map((s) => ({
            ...this.identity(s),
            unit: s.unit,
            systemdError: `no connection to ${this.conn.label}`,
            metrics: { ok: false, at: ts, error: `no connection to ${this.conn.label}` } as MetricsStatus,
            // The last /health answer is what was seen then (lastSeen), not a reading of now.
            ...this.lastSeenOf(s),
          })),
          ...peers.map((p) => ({
            ...this.identity(p.service),
            unit: p.unit,
            systemdError: `no connection to ${this.conn.label}`,
          })),
        ],
      };
    }
    const checkHealthNow = (this.tick - 1) % (this.opts.healthEveryTicks ?? 5) === 0;
    // Each probe gets most of one interval. One that takes longer (a hung endpoint, a trickling body) keeps
    // running in the background and is reported as "no answer yet", so it never holds back the others.
    // One deadline for every probe of the poll (a fleet host has a handful), not a timer each.
    const budget = deadline(Math.max(200, (this.opts.intervalMs ?? 1000) * 0.8));
    const [sd, perService] = await Promise.all([
      this.timeBoxed(
        'systemd',
        () => this.readSystemd([...services.map((s) => s.unit), ...peers.map((p) => p.unit)]),
        budget.reached,
      ),
      Promise.all(
        services.map(async (s): Promise<ServiceObservation> => {
          const r = await this.timeBoxed(
            `svc:${serviceId(s)}`,
            () => this.observeService(s, checkHealthNow, ts),
            budget.reached,
          );
          if (r.done) return r.value;
          const url = s.metricsUrl ?? s.healthUrl ?? s.apiUrl;
          return {
            ...this.identity(s),
            unit: s.unit,
            health: this.memory.get(serviceId(s))?.health,
            metrics: {
              ok: false,
              at: ts,
              error: `${s.role}: no answer yet from ${url} (waiting ${((clock.now() - r.since) / 1000).toFixed(1)} s)`,
            },
          };
        }),
      ),
    ]).finally(budget.cancel);
    const systemd = sd.done
      ? sd.value
      : {
          error: `systemctl show on ${this.conn.label} has not answered for ${((clock.now() - sd.since) / 1000).toFixed(1)} s`,
        };
    let anyTraffic = !('error' in systemd);
    const out: ServiceObservation[] = [
      ...perService,
      ...peers.map((p): ServiceObservation => ({ ...this.identity(p.service), unit: p.unit })),
    ].map((o) => {
      const unit = 'error' in systemd ? undefined : systemd.units.get(o.unit);
      if (o.metrics?.ok) anyTraffic = true;
      const evidence = this.evidence.get(o.unit)?.tracker.evidence;
      return {
        ...o,
        systemd: unit,
        systemdError: 'error' in systemd ? systemd.error : undefined,
        ...(evidence ? { evidence } : {}),
      };
    });
    for (const o of out.slice(0, perService.length)) {
      const mem = this.memoryFor(serviceId(o));
      // A failing scrape (an error, or one still waiting) says since when the figures are that old: "waiting
      // 1.8 s" alone read as fresh through a /metrics hung for minutes, each probe timing out and starting over.
      if (o.metrics?.ok) mem.lastScrapeOkAt = o.metrics.scrapedAt;
      else if (o.metrics && !('disabled' in o.metrics) && mem.lastScrapeOkAt !== undefined)
        o.metrics = { ...o.metrics, lastOkAt: mem.lastScrapeOkAt };
      if (o.systemd && mem.capacityPid !== undefined && o.systemd.mainPid !== mem.capacityPid) {
        mem.capacityFromServerInfo = undefined;
        mem.capacityPid = undefined;
      }
      if (!o.systemd) {
        if (mem.lastSeen) o.lastSeen = mem.lastSeen;
        // Nothing of the unit could be read now: a /health answer from an earlier poll is what was seen then
        // (lastSeen has it), not a reading of now — recorded as one, the history said "healthy" through an outage.
        if (o.health && o.health.checkedAt < ts) delete o.health;
        continue;
      }
      if (mem.health && mem.health.checkedAt >= ts) mem.healthPid = o.systemd.mainPid;
      else if (mem.health && mem.healthPid !== undefined && o.systemd.mainPid !== mem.healthPid) {
        // Read from another process than the one running now: not known for this one until it is read again.
        mem.health = undefined;
        mem.healthPid = undefined;
        delete o.health;
      }
      if (o.health && mem.healthPid === o.systemd.mainPid) o.health = { ...o.health, mainPid: mem.healthPid };
      mem.lastSeen = {
        ts,
        systemd: o.systemd,
        ...(o.health ? { health: o.health } : {}),
        ...(o.evidence ? { evidence: o.evidence } : {}),
      };
    }
    // A probe started by this very poll and not answered within its budget is slow, not yet overdue — the first
    // poll of a fresh link waits for its shell to start — and a busy laptop misses a poll now and then (the
    // fleet's rows read "unreachable" for it). So the link is only stale once a probe has gone unanswered for
    // STALE_AFTER_POLLS polls, or every probe failed outright.
    // The stale link's `since` is when the host last answered, so what the operator reads counts from there (a
    // duration frozen into the reason read "3.0 s" for the whole outage).
    const unanswered = sd.done ? 0 : ts - sd.since;
    const silentSince = this.lastAnsweredAt ?? (sd.done ? ts : sd.since);
    if (anyTraffic) {
      this.lastAnsweredAt = ts;
      this.conn.markFresh();
    } else if (sd.done) this.conn.markStale('no command or scrape answered in the last poll', silentSince);
    else if (unanswered >= STALE_AFTER_POLLS * (this.opts.intervalMs ?? 1000))
      this.conn.markStale('no command or scrape answered', silentSince);
    return { deploymentId: this.deployment.id, hostId: this.hostId, ts, services: out };
  }

  private readonly pending = new Map<string, { promise: Promise<unknown>; since: number }>();

  /** Runs `start` unless the same probe is still running from an earlier tick; waits for it until `reached`. */
  private async timeBoxed<T>(
    key: string,
    start: () => Promise<T>,
    reached: Promise<'timeout'>,
  ): Promise<{ done: true; value: T } | { done: false; since: number }> {
    let p = this.pending.get(key) as { promise: Promise<T>; since: number } | undefined;
    if (!p) {
      const entry = { promise: start(), since: this.opts.clock.now() };
      this.pending.set(key, entry);
      void entry.promise.finally(() => {
        if (this.pending.get(key) === entry) this.pending.delete(key);
      });
      p = entry;
    }
    const winner = await Promise.race([p.promise.then((value) => ({ value })), reached]);
    return winner === 'timeout' ? { done: false, since: p.since } : { done: true, value: winner.value };
  }

  private async readSystemd(units: string[]): Promise<{ units: Map<string, UnitState> } | { error: string }> {
    try {
      const res = await this.conn.execInShell(systemctlShowCommand(units), {
        timeoutMs: 10_000,
        maxBytes: 1024 * 1024,
      });
      if (res.exitCode !== 0 && !res.stdout.trim())
        return {
          error: `systemctl show failed on ${this.conn.label} (exit ${res.exitCode}): ${res.stderr.trim().slice(0, 200)}`,
        };
      return { units: parseSystemctlShow(res.stdout, units) };
    } catch (err) {
      return { error: (err as Error).message };
    }
  }

  private async observeService(
    s: ServiceConfig,
    checkHealthNow: boolean,
    ts: number,
  ): Promise<ServiceObservation> {
    const mem = this.memoryFor(serviceId(s));
    const obs: ServiceObservation = { ...this.identity(s), unit: s.unit };
    let agent;
    try {
      agent = this.conn.httpAgent();
    } catch (err) {
      obs.metrics = { ok: false, at: ts, error: (err as Error).message };
      return obs;
    }
    const healthUrl = s.healthUrl ?? `${s.apiUrl}/health`;
    const [scrape, health] = await Promise.all([
      s.metricsUrl
        ? scrapeMetrics(
            agent,
            {
              url: s.metricsUrl,
              what: `${s.role} (${s.unit})`,
              unit: s.unit,
              kind: s.role === 'router' ? 'router' : 'server',
            },
            { cache: this.seriesCacheFor(s.metricsUrl) },
          )
        : Promise.resolve(null),
      checkHealthNow
        ? checkHealth(agent, healthUrl, () => this.opts.clock.now())
        : Promise.resolve(mem.health),
    ]);
    if (health) mem.health = health;
    obs.health = mem.health;
    obs.metrics = this.metricsStatus(s, scrape, ts);
    if (scrape?.ok) {
      this.emit('scrape', { ts, role: s.role, ...(s.id ? { id: s.id } : {}), exposition: scrape.exposition });
      if (s.role !== 'router') {
        const kv = await this.kvFor(s, scrape.exposition, agent);
        if ('missing' in kv) obs.kvMissing = { reason: kv.reason, expected: kv.expected };
        else obs.kv = kv;
      }
    }
    return obs;
  }

  private metricsStatus(
    s: ServiceConfig,
    scrape: Awaited<ReturnType<typeof scrapeMetrics>> | null,
    ts: number,
  ): MetricsStatus {
    if (!scrape)
      return {
        ok: false,
        at: ts,
        disabled: true,
        error: `${s.role}: no metrics endpoint configured`,
        hint:
          s.role === 'router'
            ? 'Set --prometheus-port on the router.'
            : `Add --enable-metrics to ExecStart of ${s.unit}.`,
      };
    if (scrape.ok)
      return {
        ok: true,
        scrapedAt: ts,
        durationMs: scrape.durationMs,
        families: scrape.exposition.families.length,
        samples: scrape.exposition.sampleCount,
      };
    return scrape.disabled
      ? { ok: false, at: ts, disabled: true, error: scrape.error, hint: scrape.hint }
      : { ok: false, at: ts, error: scrape.error, hint: scrape.hint };
  }

  private async kvFor(s: ServiceConfig, exp: Exposition, agent: http.Agent): Promise<KvUsage | KvMissing> {
    const mem = this.memoryFor(serviceId(s));
    let kv = extractKv(exp, { capacityFromServerInfo: mem.capacityFromServerInfo });
    if ('missing' in kv && kv.needsServerInfo && mem.capacityFromServerInfo === undefined) {
      // Older servers do not export max_total_num_tokens; /server_info (or /get_server_info before the rename) has it.
      const tried: string[] = [];
      for (const path of ['/server_info', '/get_server_info']) {
        try {
          const res = await httpGet(agent, `${s.apiUrl}${path}`, {
            timeoutMs: 5000,
            maxBytes: 4 * 1024 * 1024,
          });
          if (res.status !== 200) {
            tried.push(`${path}: HTTP ${res.status}`);
            continue;
          }
          const cap = serverInfoCapacity(JSON.parse(res.body) as unknown);
          if (cap) {
            mem.capacityFromServerInfo = cap;
            mem.capacityPid = this.latest?.services.find(
              (o) => serviceId(o) === serviceId(s) && o.unit === s.unit,
            )?.systemd?.mainPid;
            break;
          }
          tried.push(`${path}: no max_total_num_tokens in the answer`);
        } catch (err) {
          // Not JSON or not reachable: try the other name, and say below what each answered.
          tried.push(`${path}: ${(err as Error).message}`);
        }
      }
      kv = extractKv(exp, { capacityFromServerInfo: mem.capacityFromServerInfo });
      if (isKvMissing(kv) && tried.length) kv = { ...kv, reason: `${kv.reason} (${tried.join('; ')})` };
    }
    return kv;
  }

  private memoryFor(id: string): ServiceMemory {
    let m = this.memory.get(id);
    if (!m) this.memory.set(id, (m = {}));
    return m;
  }

  /** The last reading of a service whose systemd state was read, for an observation that could not read it. */
  private lastSeenOf(s: ServiceConfig): Pick<ServiceObservation, 'lastSeen'> {
    const seen = this.memory.get(serviceId(s))?.lastSeen;
    return seen ? { lastSeen: seen } : {};
  }

  /** A service's role, and in a fleet its id and host, as every observation of it carries them. */
  private identity(s: ServiceConfig): Pick<ServiceObservation, 'role' | 'id' | 'hostId'> {
    return s.id === undefined ? { role: s.role } : { role: s.role, id: s.id, hostId: this.hostId };
  }

  /** Node rank ≥ 1 units on this host of workers whose rank 0 runs elsewhere or is another unit. */
  private peerUnits(): PeerUnit[] {
    const out: PeerUnit[] = [];
    for (const s of this.deployment.services)
      for (const u of s.units ?? [])
        if (u.hostId === this.hostId && u.nodeRank > 0 && !(s.hostId === this.hostId && s.unit === u.unit))
          out.push({ service: s, unit: u.unit });
    return out;
  }
}

/** A real-time deadline (probes are bounded in wall time, not the monitor's clock) that can be called off. */
function deadline(ms: number): { reached: Promise<'timeout'>; cancel: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const reached = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), ms)));
  return { reached, cancel: () => clearTimeout(timer) };
}
