// A counting semaphore. Bounds concurrent SSH session channels below OpenSSH's MaxSessions (10):
// past that limit sshd refuses channels with "open failed", which would look like a host fault.

export class Semaphore {
  private active = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError(`semaphore limit must be >= 1, got ${limit}`);
  }

  get inUse(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiters.length;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
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
  async hold(): Promise<() => void> {
    await this.acquire();
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.release();
    };
  }

  private acquire(): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private release(): void {
    const next = this.waiters.shift();
    // Hand the slot straight to the next waiter so `active` never dips and lets a newcomer jump the queue.
    if (next) next();
    else this.active--;
  }
}
