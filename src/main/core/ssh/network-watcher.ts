// Notices what makes open SSH connections silently dead: the machine slept (wall clock jumped ahead of the
// monotonic clock, or a poll came far too late), or the network changed (an interface or address appeared or
// went away: Wi-Fi switch, VPN up/down). Subscribers reconnect at once instead of waiting up to 30 s for
// keepalives. Electron's powerMonitor ('resume', 'unlock-screen') and the browser's online event can feed the
// same subscribers through notify().
import { EventEmitter } from 'node:events';
import os from 'node:os';

export interface NetworkChange {
  kind: 'resume' | 'network';
  /** Human text for the timeline: "system resumed after ~340 s", "network changed: +10.8.0.2 (tun0)". */
  reason: string;
  at: number;
}

export interface NetworkWatcherOptions {
  /** Poll period. Default 3 s. */
  intervalMs?: number;
  /** A poll this much later than expected counts as a sleep/resume. Default 10 s. */
  resumeThresholdMs?: number;
  /** Changes closer together than this are reported once (an interface flaps while the OS reconfigures). */
  minSpacingMs?: number;
  interfaces?: () => NodeJS.Dict<os.NetworkInterfaceInfo[]>;
  wallNow?: () => number;
  monoNow?: () => number;
}

export class NetworkWatcher extends EventEmitter<{ change: [NetworkChange] }> {
  private timer: NodeJS.Timeout | null = null;
  private lastSignature: Set<string>;
  private lastWall: number;
  private lastMono: number;
  private lastEmit = -Infinity;
  private pending: NetworkChange | null = null;
  private readonly intervalMs: number;
  private readonly resumeThresholdMs: number;
  private readonly minSpacingMs: number;
  private readonly interfaces: () => NodeJS.Dict<os.NetworkInterfaceInfo[]>;
  private readonly wallNow: () => number;
  private readonly monoNow: () => number;

  constructor(opts: NetworkWatcherOptions = {}) {
    super();
    this.intervalMs = opts.intervalMs ?? 3000;
    this.resumeThresholdMs = opts.resumeThresholdMs ?? 10_000;
    this.minSpacingMs = opts.minSpacingMs ?? 2000;
    this.interfaces = opts.interfaces ?? (() => os.networkInterfaces());
    this.wallNow = opts.wallNow ?? (() => Date.now());
    this.monoNow = opts.monoNow ?? (() => performance.now());
    this.lastSignature = this.signature();
    this.lastWall = this.wallNow();
    this.lastMono = this.monoNow();
  }

  start(): void {
    if (this.timer) return;
    this.lastSignature = this.signature();
    this.lastWall = this.wallNow();
    this.lastMono = this.monoNow();
    this.timer = setInterval(() => this.check(), this.intervalMs);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One poll. Public so shells and tests can drive it; the interval calls it every intervalMs. */
  check(): void {
    const wall = this.wallNow();
    const mono = this.monoNow();
    const wallDelta = wall - this.lastWall;
    const monoDelta = mono - this.lastMono;
    this.lastWall = wall;
    this.lastMono = mono;
    // While suspended the monotonic clock stands still (Linux, macOS) but the wall clock runs on; a poll that
    // arrives far too late also means the process was frozen.
    const late = Math.max(wallDelta - monoDelta, monoDelta - this.intervalMs);
    if (late > this.resumeThresholdMs) {
      this.report({
        kind: 'resume',
        reason: `system resumed after ~${Math.round(wallDelta / 1000)} s`,
        at: wall,
      });
      this.lastSignature = this.signature();
      return;
    }
    const now = this.signature();
    const added = [...now].filter((a) => !this.lastSignature.has(a));
    const removed = [...this.lastSignature].filter((a) => !now.has(a));
    this.lastSignature = now;
    if (added.length || removed.length) {
      const parts = [...added.map((a) => `+${a}`), ...removed.map((a) => `-${a}`)];
      this.report({
        kind: 'network',
        reason: `network changed: ${parts.slice(0, 6).join(', ')}${parts.length > 6 ? ', …' : ''}`,
        at: wall,
      });
      return;
    }
    if (this.pending && wall - this.lastEmit >= this.minSpacingMs) this.flush(wall);
  }

  /** Shells report OS events here (powerMonitor 'resume', 'unlock-screen'; navigator 'online'). */
  notify(kind: NetworkChange['kind'], reason: string): void {
    this.lastWall = this.wallNow();
    this.lastMono = this.monoNow();
    this.lastSignature = this.signature();
    this.report({ kind, reason, at: this.lastWall });
  }

  private report(change: NetworkChange): void {
    this.pending = change;
    if (change.at - this.lastEmit >= this.minSpacingMs) this.flush(change.at);
  }

  private flush(at: number): void {
    const change = this.pending;
    if (!change) return;
    this.pending = null;
    this.lastEmit = at;
    this.emit('change', change);
  }

  private signature(): Set<string> {
    const out = new Set<string>();
    for (const [name, addrs] of Object.entries(this.interfaces()))
      for (const a of addrs ?? []) if (!a.internal) out.add(`${a.address} (${name})`);
    return out;
  }
}
