// Request-level PD traffic: router → prefill bootstrap (decode preallocates KV) → prefill queue → prefill
// forward → KV transfer → decode. Every request is an object, so gauges are integers, counters and
// histogram counts agree with each other, and latencies are the ones the simulated requests really had.
// The router picks one prefill and one decode worker per request by weight among the healthy ones; with
// one worker per role (the single demo host) no draw is made, so its random sequence is the one it had.
import type { LoadModel } from './load-model';
import type { ServerProcess, RouterProcess, RouterWorker } from './processes';
import type { Rng } from './rng';

type Stage = 'bootstrap' | 'waiting' | 'prefilling' | 'transferring' | 'decode-wait' | 'decoding' | 'aborted';

interface Request {
  id: number;
  arrivedAt: number;
  prompt: number;
  output: number;
  cached: number;
  generated: number;
  stage: Stage;
  /** Index of its prefill and decode worker in the context's slots. */
  pi: number;
  di: number;
  rank: number;
  /** Decode KV tokens this request holds (prompt preallocated + generated). */
  kvHeld: number;
  bootstrapDoneAt: number;
  bootstrapMs: number;
  allocMs: number;
  prefillRemaining: number;
  transferEndsAt: number;
  firstTokenAt: number;
  retracted: boolean;
}

/** Uncached prompt tokens per second the 4×H100 prefill server sustains for Qwen3-32B at TP4. */
const PREFILL_TOKENS_PER_S = 52_000;
/** KV bytes per token per TP rank: 64 layers × 8 KV heads × 128 dims × (K,V) × bf16 / TP 4. */
const KV_MB_PER_TOKEN_PER_RANK = (64 * 8 * 128 * 2 * 2) / 4 / 1e6;
const BOOTSTRAP_TIMEOUT_MS = 300_000;
/** Decode admits a preallocation only while the pool stays under this fraction. */
const PREALLOC_HEADROOM = 0.99;
const RETRACT_ABOVE = 0.999;
const RETRACT_TO = 0.985;
/** A retracted request is readmitted once it fits under this fraction again. */
const READMIT_BELOW = 0.995;
/** The router's admission bound: beyond this many requests in flight it sheds load. */
const MAX_IN_FLIGHT = 3000;

/** One worker as the traffic sees it: its process (null while down) and the router's entry for it. */
export interface WorkerSlot {
  proc: ServerProcess | null;
  /** null while the router is down. */
  worker: RouterWorker | null;
  /** Share of requests the router sends it, relative to the others of its role. */
  weight: number;
  /** kv-full fault (decode): long-running generations pin its pool. */
  kvFull: boolean;
}

export interface TrafficContext {
  prefill: WorkerSlot[];
  decode: WorkerSlot[];
  router: RouterProcess | null;
}

export interface StepStats {
  arrived: number;
  rejected: number;
}

export class PdTraffic {
  private reqs: Request[] = [];
  private nextId = 1;

  constructor(
    private readonly rng: Rng,
    private readonly load: LoadModel,
    /** Offered load relative to the single host's (a fleet with more workers takes more). */
    private readonly rateScale = 1,
  ) {}

  get inFlight(): number {
    return this.reqs.length;
  }

  /** Advance by dt ms starting at t0. */
  step(t0: number, dtMs: number, ctx: TrafficContext): StepStats {
    const t1 = t0 + dtMs;
    const dt = dtMs / 1000;
    const { prefill: P, decode: D, router } = ctx;
    const ready = (s: WorkerSlot): boolean => s.proc?.stage === 'ready';
    const kvFull = D.some((s) => s.kvFull);

    // Arrivals. Without a listening router, clients simply cannot connect: nothing is counted anywhere.
    const stats: StepStats = { arrived: 0, rejected: 0 };
    const offered = this.rng.poisson(this.load.rate(t0) * this.rateScale * (kvFull ? 1.3 : 1) * dt);
    if (router?.listening && offered > 0) {
      for (let i = 0; i < offered; i++) {
        router.countRequest('POST', '/v1/chat/completions');
        router.pdRequests++;
        const pi = this.pick(P);
        const di = this.pick(D);
        if (pi < 0 || di < 0) {
          router.countResponse('/v1/chat/completions', 503, 'no_workers');
          router.pdSelectionErrors++;
          stats.rejected++;
          continue;
        }
        const ps = P[pi];
        const ds = D[di];
        const pw = ps.worker as RouterWorker;
        const dw = ds.worker as RouterWorker;
        if (this.reqs.length >= MAX_IN_FLIGHT) {
          router.countResponse('/v1/chat/completions', 503, 'queue_full');
          stats.rejected++;
          continue;
        }
        const prefill = ps.proc;
        const decode = ds.proc;
        if (!ready(ps) || !ready(ds) || !prefill || !decode) {
          // The router still believes in a worker that is gone: the upstream connect fails.
          router.countResponse('/v1/chat/completions', 502, 'backend_error');
          (ready(ps) ? dw : pw).errors++;
          (ready(ps) ? dw : pw).cbConsecutiveFailures++;
          stats.rejected++;
          continue;
        }
        const shape = this.load.sample(this.rng);
        const arrivedAt = t0 + this.rng.next() * dtMs;
        this.reqs.push({
          id: this.nextId,
          arrivedAt,
          prompt: shape.promptTokens,
          output: ds.kvFull ? Math.min(shape.outputTokens * 40, 30_000) : shape.outputTokens,
          cached: 0,
          generated: 0,
          stage: 'bootstrap',
          pi,
          di,
          rank: this.nextId % decode.dpRanks,
          kvHeld: 0,
          bootstrapDoneAt: 0,
          bootstrapMs: 0,
          allocMs: 0,
          prefillRemaining: 0,
          transferEndsAt: 0,
          firstTokenAt: 0,
          retracted: false,
        });
        this.nextId++;
        prefill.numRequests++;
        decode.numRequests++;
        router.routedRequests++;
        pw.processed++;
        dw.processed++;
        stats.arrived++;
      }
    }
    // Nothing moves without at least one working server of each role (the single host: without both).
    if (!P.some(ready) || !D.some(ready)) {
      this.refreshGauges(ctx);
      return stats;
    }
    // Requests before decode need both their servers; decoding needs only its decode server.
    const pairUp = (r: Request): boolean => ready(P[r.pi]) && ready(D[r.di]);
    const decodeUp = (r: Request): boolean => ready(D[r.di]);
    const proc = (s: WorkerSlot): ServerProcess => s.proc as ServerProcess;

    const rankUsed = D.map((s) => new Array<number>(s.proc?.dpRanks ?? 1).fill(0));
    for (const r of this.reqs) rankUsed[r.di][r.rank] += r.kvHeld;
    const rankCap = D.map((s) => (s.proc ? s.proc.ranks.map((r) => r.capacity) : [0]));

    // 1. Decode: every running request generates at a speed that falls with batch size.
    const finished: Request[] = [];
    D.forEach((slot, k) => {
      if (!ready(slot)) return;
      const decode = proc(slot);
      const batch = this.reqs.filter((r) => r.di === k && r.stage === 'decoding');
      const perReqSpeed = 60 / (1 + batch.length / 180);
      let generated = 0;
      for (const r of batch) {
        const tokens = Math.min(r.output - r.generated, perReqSpeed * dt);
        r.generated += tokens;
        r.kvHeld += tokens;
        rankUsed[k][r.rank] += tokens;
        generated += tokens;
        if (r.generated >= r.output - 1e-9) finished.push(r);
      }
      if (generated > 0) {
        decode.itl.observe(1 / perReqSpeed, Math.round(generated));
        decode.generationTokensFloat += generated;
        decode.realtimeDecode += generated;
        decode.cudaGraphPasses += Math.round((dt * perReqSpeed) / 1);
      }
      decode.genThroughput = generated / dt;
      for (const r of batch) {
        if (r.generated < r.output - 1e-9) continue;
        const doneAt = Math.min(t1, r.firstTokenAt + (r.output / perReqSpeed) * 1000);
        const end = Math.max(doneAt, t0);
        decode.promptTokens += r.prompt;
        decode.e2e.observe((end - r.arrivedAt) / 1000);
        rankUsed[k][r.rank] -= r.kvHeld;
        r.kvHeld = 0;
        if (router) {
          router.countResponse('/v1/chat/completions', 200, '');
          router.duration.observe((end - r.arrivedAt) / 1000);
          router.observeHttp('POST', '/v1/chat/completions', (end - r.arrivedAt) / 1000);
          router.durationLegacy.observe((end - r.arrivedAt) / 1000);
        }
      }
    });
    if (finished.length) {
      const done = new Set(finished);
      this.reqs = this.reqs.filter((r) => !done.has(r));
    }

    // 2. Retraction: when generation overruns a rank's pool, the newest requests give their KV back.
    D.forEach((slot, k) => {
      if (!ready(slot)) return;
      const decode = proc(slot);
      for (let rank = 0; rank < decode.dpRanks; rank++) {
        if (rankUsed[k][rank] <= rankCap[k][rank] * RETRACT_ABOVE) continue;
        const victims = this.reqs
          .filter((r) => r.di === k && r.rank === rank && r.stage === 'decoding')
          .reverse();
        for (const v of victims) {
          if (rankUsed[k][rank] <= rankCap[k][rank] * RETRACT_TO) break;
          rankUsed[k][rank] -= v.kvHeld;
          decode.retractedRequests++;
          decode.retractedInputTokens += v.prompt;
          decode.retractedOutputTokens += Math.floor(v.generated);
          v.kvHeld = 0;
          v.stage = 'decode-wait';
          v.retracted = true;
        }
      }
    });

    // 3. Bootstrap: decode preallocates the prompt's KV; FIFO per rank, head-of-line blocking when full.
    // Retracted requests come first: while any wait on a rank, that rank preallocates nothing new.
    const blocked = new Set<string>();
    const at = (r: Request): string => `${r.di}:${r.rank}`;
    for (const r of this.reqs) if (r.retracted) blocked.add(at(r));
    for (const r of this.reqs) {
      if (r.stage !== 'bootstrap') continue;
      if (!pairUp(r)) continue;
      if (t1 - r.arrivedAt > BOOTSTRAP_TIMEOUT_MS) {
        this.abort(r, ctx, 'bootstrap');
        continue;
      }
      if (blocked.has(at(r))) continue;
      if (rankUsed[r.di][r.rank] + r.prompt > rankCap[r.di][r.rank] * PREALLOC_HEADROOM) {
        blocked.add(at(r));
        continue;
      }
      const prefill = proc(P[r.pi]);
      const decode = proc(D[r.di]);
      rankUsed[r.di][r.rank] += r.prompt;
      r.kvHeld = r.prompt;
      r.stage = 'waiting';
      r.bootstrapDoneAt = Math.max(r.arrivedAt, t0) + this.rng.range(1, 6);
      r.bootstrapMs = r.bootstrapDoneAt - r.arrivedAt;
      r.allocMs = Math.max(0.5, r.bootstrapMs * this.rng.range(0.2, 0.6));
      const hit =
        this.load.cacheHitTarget(t0) * Math.min(1, prefill.evictableTokens / (0.25 * prefill.capacity));
      r.cached =
        Math.floor((r.prompt * Math.max(0, Math.min(0.95, hit + this.rng.normal() * 0.08))) / 64) * 64;
      r.prefillRemaining = r.prompt - r.cached;
      decode.queueTime.observe((r.bootstrapDoneAt - r.arrivedAt) / 1000);
      decode.queueTimeLegacy.observe((r.bootstrapDoneAt - r.arrivedAt) / 1000);
    }
    this.reqs = this.reqs.filter((r) => r.stage !== 'aborted');

    // 4. Prefill forward with a token budget per step (chunked prefill carries a partial request over).
    P.forEach((slot, j) => {
      if (!ready(slot)) return;
      const prefill = proc(slot);
      let budget = PREFILL_TOKENS_PER_S * dt;
      let spent = 0;
      let prefillNewTokens = 0;
      let prefillCachedTokens = 0;
      for (const r of this.reqs) {
        if (budget <= 0) break;
        if (r.pi !== j || (r.stage !== 'waiting' && r.stage !== 'prefilling') || !decodeUp(r)) continue;
        if (r.stage === 'waiting') {
          r.stage = 'prefilling';
          const wait = Math.max(0, t0 + (spent / PREFILL_TOKENS_PER_S) * 1000 - r.bootstrapDoneAt) / 1000;
          prefill.queueTime.observe(wait);
          prefill.queueTimeLegacy.observe(wait);
        }
        const take = Math.min(budget, r.prefillRemaining);
        budget -= take;
        spent += take;
        r.prefillRemaining -= take;
        prefillNewTokens += take;
        if (r.prefillRemaining > 0) continue;
        const doneAt = Math.min(t1, t0 + (spent / PREFILL_TOKENS_PER_S) * 1000);
        const totalMb = r.prompt * KV_MB_PER_TOKEN_PER_RANK;
        const speedGbS = Math.max(0.5, this.rng.logNormal(18, 0.35));
        const latencyMs = (totalMb / 1000 / speedGbS) * 1000 + this.rng.range(2, 8);
        r.stage = 'transferring';
        r.transferEndsAt = doneAt + latencyMs;
        prefillCachedTokens += r.cached;
        prefill.promptTokens += r.prompt;
        prefill.cachedTokens += r.cached;
        prefill.generationTokensFloat += 1;
        prefill.realtimePrefillCompute += r.prompt - r.cached;
        prefill.realtimePrefillCache += r.cached;
        prefill.ttft.observe((doneAt - r.arrivedAt) / 1000);
        prefill.observeKvTransfer({
          speedGbS,
          latencyMs,
          bootstrapMs: r.bootstrapMs,
          allocMs: r.allocMs,
          totalMb,
        });
        if (this.rng.next() < 2e-4) prefill.prefillRetries++;
      }
      if (prefillNewTokens > 0) {
        prefill.cacheHitRate = prefillCachedTokens / Math.max(1, prefillCachedTokens + prefillNewTokens);
        prefill.noneGraphPasses += Math.ceil(prefillNewTokens / 8192);
      }
      prefill.inputThroughput = prefillNewTokens / dt;
    });

    // 5. Transfers complete: prefill inserts the prompt into its radix cache, decode takes over.
    for (const r of this.reqs) {
      if (r.stage !== 'transferring' || r.transferEndsAt > t1 || !pairUp(r)) continue;
      const prefill = proc(P[r.pi]);
      const decode = proc(D[r.di]);
      r.stage = 'decode-wait';
      r.firstTokenAt = r.transferEndsAt;
      prefill.e2e.observe((r.transferEndsAt - r.arrivedAt) / 1000);
      prefill.evictableTokens += r.prompt - r.cached * 0.85;
      decode.ttft.observe((r.firstTokenAt - r.arrivedAt) / 1000);
      if (this.rng.next() < 1e-4) {
        decode.transferFailed++;
        prefill.transferFailed++;
      }
    }
    // The radix cache fills up to what the pool allows and then evicts least-recently-used prefixes.
    P.forEach((slot, j) => {
      if (!ready(slot)) return;
      const prefill = proc(slot);
      const prefillUsed = this.reqs.reduce(
        (a, r) =>
          a +
          (r.pi !== j
            ? 0
            : r.stage === 'transferring'
              ? r.prompt
              : r.stage === 'prefilling'
                ? r.prompt - r.prefillRemaining
                : 0),
        0,
      );
      const evictCap =
        prefill.capacity * (0.72 + 0.2 * this.load.cacheHitTarget(t0 + 3_600_000)) - prefillUsed;
      prefill.evictableTokens = Math.max(0, Math.min(prefill.evictableTokens, evictCap));
    });

    // 6. Decode admission: a transferred request joins the running batch; a retracted one needs room again.
    for (const r of this.reqs) {
      if (r.stage !== 'decode-wait' || !decodeUp(r)) continue;
      if (r.retracted) {
        const cap = rankCap[r.di][r.rank];
        if (rankUsed[r.di][r.rank] + r.prompt + r.generated > cap * READMIT_BELOW) continue;
        rankUsed[r.di][r.rank] += r.prompt + r.generated;
        r.kvHeld = r.prompt + r.generated;
        r.retracted = false;
      }
      r.stage = 'decoding';
    }

    this.refreshGauges(ctx);
    return stats;
  }

  /**
   * The router's choice among the healthy workers of a role, by weight. -1 when none is healthy. One
   * candidate takes no random draw.
   */
  private pick(slots: WorkerSlot[]): number {
    const ok: number[] = [];
    for (let i = 0; i < slots.length; i++) if (slots[i].worker?.health === 'healthy') ok.push(i);
    if (ok.length <= 1) return ok.length ? ok[0] : -1;
    const total = ok.reduce((a, i) => a + slots[i].weight, 0);
    let x = this.rng.next() * total;
    for (const i of ok) {
      x -= slots[i].weight;
      if (x < 0) return i;
    }
    return ok[ok.length - 1];
  }

  private abort(r: Request, ctx: TrafficContext, reason: 'bootstrap'): void {
    r.stage = 'aborted';
    const prefill = ctx.prefill[r.pi]?.proc;
    const decode = ctx.decode[r.di]?.proc;
    if (prefill) {
      prefill.abortedRequests++;
      if (reason === 'bootstrap') prefill.bootstrapFailed++;
    }
    if (decode) decode.abortedRequests++;
    ctx.router?.countResponse('/v1/chat/completions', 500, 'backend_error');
  }

  /**
   * A server process died: every request it held is lost. The peer counts KV transfer failures for the
   * requests that were between the two, and the router answers those clients with an error.
   */
  dropFor(role: 'prefill' | 'decode', slot: number, ctx: TrafficContext): number {
    const lost = this.reqs.filter((r) =>
      role === 'prefill'
        ? r.pi === slot && r.stage !== 'decode-wait' && r.stage !== 'decoding'
        : r.di === slot,
    );
    if (!lost.length) return 0;
    for (const r of lost) {
      const prefill = ctx.prefill[r.pi]?.proc;
      const decode = ctx.decode[r.di]?.proc;
      if (role === 'decode' && prefill && (r.stage === 'transferring' || r.stage === 'bootstrap')) {
        if (r.stage === 'transferring') prefill.transferFailed++;
        else prefill.bootstrapFailed++;
        prefill.abortedRequests++;
      }
      if (role === 'prefill' && decode && r.stage !== 'bootstrap') {
        decode.transferFailed++;
        decode.abortedRequests++;
      }
      ctx.router?.countResponse('/v1/chat/completions', 502, 'backend_error');
    }
    const gone = new Set(lost);
    this.reqs = this.reqs.filter((r) => !gone.has(r));
    this.refreshGauges(ctx);
    return lost.length;
  }

  /** One pass over the in-flight requests to set every gauge the processes and the router expose. */
  private refreshGauges(ctx: TrafficContext): void {
    const { router } = ctx;
    const stages = (): Record<Stage, number> => ({
      bootstrap: 0,
      waiting: 0,
      prefilling: 0,
      transferring: 0,
      'decode-wait': 0,
      decoding: 0,
      aborted: 0,
    });
    const P = ctx.prefill.map(() => ({ byStage: stages(), used: 0 }));
    const D = ctx.decode.map((s) => {
      const dp = s.proc?.dpRanks ?? 1;
      const zero = (): number[] => new Array<number>(dp).fill(0);
      return {
        dp,
        byStage: stages(),
        running: zero(),
        queued: zero(),
        held: zero(),
        seqLens: zero(),
        retracted: 0,
        pendingTokens: 0,
        all: 0,
      };
    });
    for (const r of this.reqs) {
      const p = P[r.pi];
      const d = D[r.di];
      p.byStage[r.stage]++;
      d.byStage[r.stage]++;
      d.all++;
      const k = r.rank < d.dp ? r.rank : 0;
      d.held[k] += r.kvHeld;
      if (r.stage === 'decoding') {
        d.running[k]++;
        d.seqLens[k] += r.prompt + r.generated;
      } else if (r.stage === 'decode-wait') d.queued[k]++;
      else if (r.stage === 'transferring') p.used += r.prompt;
      else if (r.stage === 'prefilling') p.used += r.prompt - r.prefillRemaining;
      else if (r.stage === 'bootstrap') d.pendingTokens += r.prompt;
      if (r.retracted) d.retracted++;
    }
    ctx.prefill.forEach((slot, j) => {
      const { byStage, used } = P[j];
      const prefill = slot.proc;
      if (prefill) {
        const rank = prefill.ranks[0];
        rank.running = byStage.prefilling;
        rank.queue = byStage.waiting;
        rank.usedTokens = Math.round(used);
        rank.evictableTokens = Math.round(prefill.evictableTokens);
        rank.sumSeqLens = 0;
        prefill.bootstrapQueue = byStage.bootstrap;
        prefill.inflightQueue = byStage.transferring;
      }
      if (router && slot.worker)
        slot.worker.active = byStage.bootstrap + byStage.waiting + byStage.prefilling + byStage.transferring;
    });
    ctx.decode.forEach((slot, k) => {
      const d = D[k];
      const decode = slot.proc;
      if (decode) {
        decode.ranks.forEach((rank, i) => {
          rank.running = d.running[i];
          rank.queue = d.queued[i];
          rank.usedTokens = Math.round(d.held[i]);
          rank.evictableTokens = 0;
          rank.sumSeqLens = Math.round(d.seqLens[i]);
        });
        decode.preallocQueue = d.byStage.bootstrap;
        decode.transferQueue = d.byStage.waiting + d.byStage.prefilling + d.byStage.transferring;
        decode.retractedQueue = d.retracted;
        decode.pendingPreallocTokens = d.pendingTokens;
      }
      if (router && slot.worker) slot.worker.active = d.all;
    });
    if (router) router.connectionsActive = this.reqs.length;
  }
}
