// Request-level PD traffic: router → prefill bootstrap (decode preallocates KV) → prefill queue → prefill
// forward → KV transfer → decode. Every request is an object, so gauges are integers, counters and
// histogram counts agree with each other, and latencies are the ones the simulated requests really had.
import type { LoadModel } from './load-model';
import type { ServerProcess, RouterProcess } from './processes';
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

export interface TrafficContext {
  prefill: ServerProcess | null;
  decode: ServerProcess | null;
  router: RouterProcess | null;
  /** kv-full fault: long-running generations pin the decode pool. */
  kvFull: boolean;
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
  ) {}

  get inFlight(): number {
    return this.reqs.length;
  }

  /** Advance by dt ms starting at t0. */
  step(t0: number, dtMs: number, ctx: TrafficContext): StepStats {
    const t1 = t0 + dtMs;
    const dt = dtMs / 1000;
    const { prefill, decode, router } = ctx;
    const prefillUp = prefill?.stage === 'ready';
    const decodeUp = decode?.stage === 'ready';

    // Arrivals. Without a listening router, clients simply cannot connect: nothing is counted anywhere.
    const stats: StepStats = { arrived: 0, rejected: 0 };
    const offered = this.rng.poisson(this.load.rate(t0) * (ctx.kvFull ? 1.3 : 1) * dt);
    if (router?.listening && offered > 0) {
      const pw = router.worker('prefill');
      const dw = router.worker('decode');
      for (let i = 0; i < offered; i++) {
        router.countRequest('POST', '/v1/chat/completions');
        router.pdRequests++;
        if (pw.health !== 'healthy' || dw.health !== 'healthy') {
          router.countResponse('/v1/chat/completions', 503, 'no_workers');
          router.pdSelectionErrors++;
          stats.rejected++;
          continue;
        }
        if (this.reqs.length >= MAX_IN_FLIGHT) {
          router.countResponse('/v1/chat/completions', 503, 'queue_full');
          stats.rejected++;
          continue;
        }
        if (!prefillUp || !decodeUp || !prefill || !decode) {
          // The router still believes in a worker that is gone: the upstream connect fails.
          router.countResponse('/v1/chat/completions', 502, 'backend_error');
          (prefillUp ? dw : pw).errors++;
          (prefillUp ? dw : pw).cbConsecutiveFailures++;
          stats.rejected++;
          continue;
        }
        const shape = this.load.sample(this.rng);
        const arrivedAt = t0 + this.rng.next() * dtMs;
        this.reqs.push({
          id: this.nextId,
          arrivedAt,
          prompt: shape.promptTokens,
          output: ctx.kvFull ? Math.min(shape.outputTokens * 40, 30_000) : shape.outputTokens,
          cached: 0,
          generated: 0,
          stage: 'bootstrap',
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
    if (!prefill || !decode || !prefillUp || !decodeUp) {
      this.refreshGauges(ctx);
      return stats;
    }

    const rankUsed = new Array<number>(decode.dpRanks).fill(0);
    for (const r of this.reqs) rankUsed[r.rank] += r.kvHeld;
    const rankCap = decode.ranks.map((r) => r.capacity);

    // 1. Decode: every running request generates at a speed that falls with batch size.
    const batch = this.reqs.filter((r) => r.stage === 'decoding');
    const perReqSpeed = 60 / (1 + batch.length / 180);
    let generated = 0;
    const finished: Request[] = [];
    for (const r of batch) {
      const tokens = Math.min(r.output - r.generated, perReqSpeed * dt);
      r.generated += tokens;
      r.kvHeld += tokens;
      rankUsed[r.rank] += tokens;
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
    for (const r of finished) {
      const doneAt = Math.min(t1, r.firstTokenAt + (r.output / perReqSpeed) * 1000);
      const end = Math.max(doneAt, t0);
      decode.promptTokens += r.prompt;
      decode.e2e.observe((end - r.arrivedAt) / 1000);
      rankUsed[r.rank] -= r.kvHeld;
      r.kvHeld = 0;
      if (router) {
        router.countResponse('/v1/chat/completions', 200, '');
        router.duration.observe((end - r.arrivedAt) / 1000);
        router.observeHttp('POST', '/v1/chat/completions', (end - r.arrivedAt) / 1000);
        router.durationLegacy.observe((end - r.arrivedAt) / 1000);
      }
    }
    if (finished.length) {
      const done = new Set(finished);
      this.reqs = this.reqs.filter((r) => !done.has(r));
    }

    // 2. Retraction: when generation overruns a rank's pool, the newest requests give their KV back.
    for (let rank = 0; rank < decode.dpRanks; rank++) {
      if (rankUsed[rank] <= rankCap[rank] * RETRACT_ABOVE) continue;
      const victims = this.reqs.filter((r) => r.rank === rank && r.stage === 'decoding').reverse();
      for (const v of victims) {
        if (rankUsed[rank] <= rankCap[rank] * RETRACT_TO) break;
        rankUsed[rank] -= v.kvHeld;
        decode.retractedRequests++;
        decode.retractedInputTokens += v.prompt;
        decode.retractedOutputTokens += Math.floor(v.generated);
        v.kvHeld = 0;
        v.stage = 'decode-wait';
        v.retracted = true;
      }
    }

    // 3. Bootstrap: decode preallocates the prompt's KV; FIFO per rank, head-of-line blocking when full.
    // Retracted requests come first: while any wait on a rank, that rank preallocates nothing new.
    const blocked = new Set<number>();
    for (const r of this.reqs) if (r.retracted) blocked.add(r.rank);
    for (const r of this.reqs) {
      if (r.stage !== 'bootstrap') continue;
      if (t1 - r.arrivedAt > BOOTSTRAP_TIMEOUT_MS) {
        this.abort(r, ctx, 'bootstrap');
        continue;
      }
      if (blocked.has(r.rank)) continue;
      if (rankUsed[r.rank] + r.prompt > rankCap[r.rank] * PREALLOC_HEADROOM) {
        blocked.add(r.rank);
        continue;
      }
      rankUsed[r.rank] += r.prompt;
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
    let budget = PREFILL_TOKENS_PER_S * dt;
    let spent = 0;
    let prefillNewTokens = 0;
    let prefillCachedTokens = 0;
    for (const r of this.reqs) {
      if (budget <= 0) break;
      if (r.stage !== 'waiting' && r.stage !== 'prefilling') continue;
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

    // 5. Transfers complete: prefill inserts the prompt into its radix cache, decode takes over.
    for (const r of this.reqs) {
      if (r.stage !== 'transferring' || r.transferEndsAt > t1) continue;
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
    const prefillUsed = this.reqs.reduce(
      (a, r) =>
        a +
        (r.stage === 'transferring'
          ? r.prompt
          : r.stage === 'prefilling'
            ? r.prompt - r.prefillRemaining
            : 0),
      0,
    );
    const evictCap = prefill.capacity * (0.72 + 0.2 * this.load.cacheHitTarget(t0 + 3_600_000)) - prefillUsed;
    prefill.evictableTokens = Math.max(0, Math.min(prefill.evictableTokens, evictCap));

    // 6. Decode admission: a transferred request joins the running batch; a retracted one needs room again.
    for (const r of this.reqs) {
      if (r.stage !== 'decode-wait') continue;
      if (r.retracted) {
        if (rankUsed[r.rank] + r.prompt + r.generated > rankCap[r.rank] * READMIT_BELOW) continue;
        rankUsed[r.rank] += r.prompt + r.generated;
        r.kvHeld = r.prompt + r.generated;
        r.retracted = false;
      }
      r.stage = 'decoding';
    }

    this.refreshGauges(ctx);
    return stats;
  }

  private abort(r: Request, ctx: TrafficContext, reason: 'bootstrap'): void {
    r.stage = 'aborted';
    if (ctx.prefill) {
      ctx.prefill.abortedRequests++;
      if (reason === 'bootstrap') ctx.prefill.bootstrapFailed++;
    }
    if (ctx.decode) ctx.decode.abortedRequests++;
    ctx.router?.countResponse('/v1/chat/completions', 500, 'backend_error');
  }

  /**
   * A server process died: every request it held is lost. The peer counts KV transfer failures for the
   * requests that were between the two, and the router answers those clients with an error.
   */
  dropFor(role: 'prefill' | 'decode', ctx: TrafficContext): number {
    const lost = this.reqs.filter((r) =>
      role === 'prefill' ? r.stage !== 'decode-wait' && r.stage !== 'decoding' : true,
    );
    if (!lost.length) return 0;
    for (const r of lost) {
      if (role === 'decode' && ctx.prefill && (r.stage === 'transferring' || r.stage === 'bootstrap')) {
        if (r.stage === 'transferring') ctx.prefill.transferFailed++;
        else ctx.prefill.bootstrapFailed++;
        ctx.prefill.abortedRequests++;
      }
      if (role === 'prefill' && ctx.decode && r.stage !== 'bootstrap') {
        ctx.decode.transferFailed++;
        ctx.decode.abortedRequests++;
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
    const { prefill, decode, router } = ctx;
    const byStage: Record<Stage, number> = {
      bootstrap: 0,
      waiting: 0,
      prefilling: 0,
      transferring: 0,
      'decode-wait': 0,
      decoding: 0,
      aborted: 0,
    };
    const dp = decode?.dpRanks ?? 1;
    const running = new Array<number>(dp).fill(0);
    const queued = new Array<number>(dp).fill(0);
    const held = new Array<number>(dp).fill(0);
    const seqLens = new Array<number>(dp).fill(0);
    let prefillUsed = 0;
    let retracted = 0;
    let pendingTokens = 0;
    for (const r of this.reqs) {
      byStage[r.stage]++;
      const k = r.rank < dp ? r.rank : 0;
      held[k] += r.kvHeld;
      if (r.stage === 'decoding') {
        running[k]++;
        seqLens[k] += r.prompt + r.generated;
      } else if (r.stage === 'decode-wait') queued[k]++;
      else if (r.stage === 'transferring') prefillUsed += r.prompt;
      else if (r.stage === 'prefilling') prefillUsed += r.prompt - r.prefillRemaining;
      else if (r.stage === 'bootstrap') pendingTokens += r.prompt;
      if (r.retracted) retracted++;
    }
    if (prefill) {
      const rank = prefill.ranks[0];
      rank.running = byStage.prefilling;
      rank.queue = byStage.waiting;
      rank.usedTokens = Math.round(prefillUsed);
      rank.evictableTokens = Math.round(prefill.evictableTokens);
      rank.sumSeqLens = 0;
      prefill.bootstrapQueue = byStage.bootstrap;
      prefill.inflightQueue = byStage.transferring;
    }
    if (decode) {
      decode.ranks.forEach((rank, i) => {
        rank.running = running[i];
        rank.queue = queued[i];
        rank.usedTokens = Math.round(held[i]);
        rank.evictableTokens = 0;
        rank.sumSeqLens = Math.round(seqLens[i]);
      });
      decode.preallocQueue = byStage.bootstrap;
      decode.transferQueue = byStage.waiting + byStage.prefilling + byStage.transferring;
      decode.retractedQueue = retracted;
      decode.pendingPreallocTokens = pendingTokens;
    }
    if (router) {
      router.worker('prefill').active =
        byStage.bootstrap + byStage.waiting + byStage.prefilling + byStage.transferring;
      router.worker('decode').active = this.reqs.length;
      router.connectionsActive = this.reqs.length;
    }
  }
}
