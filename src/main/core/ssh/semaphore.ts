// A counting semaphore. Bounds the channels a link holds at once (8 per host), which keeps its session
// channels below OpenSSH's MaxSessions (10): past that limit sshd refuses channels with "open failed",
// which would look like a host fault. A full semaphore may ask its holders to give back something idle
// (`reclaim`): a kept-alive tunnel nobody is using, a spare shell.

export class Semaphore {
  private active = 0;
  private peak = 0;
  private readonly waiters: Array<{ go: () => void; kind: string }> = [];

  /**
   * `reclaim` is called when a slot of `kind` is asked for and none is free: it may start releasing an idle
   * holder (whose release then goes to the waiter), and says whether it did.
   */
  constructor(
    readonly limit: number,
    private readonly reclaim?: (kind: string) => boolean,
  ) {
    if (!(limit >= 1)) throw new RangeError(`semaphore limit must be >= 1, got ${limit}`);
  }

  get inUse(): number {
    return this.active;
  }

  /** The most slots taken at once since the start or the last `resetPeak`. */
  get maxInUse(): number {
    return this.peak;
  }

  resetPeak(): void {
    this.peak = this.active;
  }

  get queued(): number {
    return this.waiters.length;
  }

  /** Waiters for a slot of `kind`. */
  queuedFor(kind: string): number {
    let n = 0;
    for (const w of this.waiters) if (w.kind === kind) n++;
    return n;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire('');
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  /**
   * Takes a slot until the returned release is called (once; later calls do nothing): for a channel that stays
   * open, such as a persistent shell or a journal follow, which must count against MaxSessions like any exec.
   */
  async hold(kind = ''): Promise<() => void> {
    await this.acquire(kind);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.release();
    };
  }

  private acquire(kind: string): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      this.peak = Math.max(this.peak, this.active);
      return Promise.resolve();
    }
    const waiting = new Promise<void>((go) => this.waiters.push({ go, kind }));
    this.reclaim?.(kind);
    return waiting;
  }

  private release(): void {
    const next = this.waiters.shift();
    // Hand the slot straight to the next waiter so `active` never dips and lets a newcomer jump the queue.
    if (next) next.go();
    else this.active--;
  }
}
