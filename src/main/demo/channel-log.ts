// What the demo host's SSH server was asked to open, for tests and benchmarks that count the app's load on a
// host ("one journalctl per unit", "channels per minute"): every exec command line with the wall time it
// arrived, the lines written to their stdin (commands sent to a persistent shell), and the number of direct-tcpip
// channels (HTTP). Bounded: the oldest entries go first.
export interface ExecEntry {
  /** Wall-clock epoch ms the channel was opened. */
  at: number;
  command: string;
}

const MAX_ENTRIES = 50_000;

export class DemoChannelLog {
  private readonly log: ExecEntry[] = [];
  private readonly stdin: ExecEntry[] = [];
  private tcpipOpened = 0;
  private logins = 0;
  private openNow = 0;
  private openMax = 0;
  private readonly openByKind = new Map<string, number>();

  /**
   * A channel was opened (`kind`: "exec <program>" or "tcpip <address:port>"); `channelClosed` with the same
   * kind when it ends. Counts what is open at once.
   */
  channelOpened(kind: string): void {
    this.openNow++;
    this.openMax = Math.max(this.openMax, this.openNow);
    this.openByKind.set(kind, (this.openByKind.get(kind) ?? 0) + 1);
  }

  channelClosed(kind: string): void {
    this.openNow = Math.max(0, this.openNow - 1);
    const n = (this.openByKind.get(kind) ?? 0) - 1;
    if (n > 0) this.openByKind.set(kind, n);
    else this.openByKind.delete(kind);
  }

  /** The channels open now, by kind. */
  get openKinds(): Record<string, number> {
    return Object.fromEntries(this.openByKind);
  }

  /** Channels open at the same moment: now, and at most since the start or the last resetOpenMax. */
  get openChannels(): { now: number; max: number } {
    return { now: this.openNow, max: this.openMax };
  }

  resetOpenMax(): void {
    this.openMax = this.openNow;
  }

  exec(command: string): void {
    this.log.push({ at: Date.now(), command });
    if (this.log.length > MAX_ENTRIES) this.log.splice(0, this.log.length - MAX_ENTRIES);
  }

  /** A line a client wrote to a channel's stdin. */
  stdinLine(line: string): void {
    this.stdin.push({ at: Date.now(), command: line });
    if (this.stdin.length > MAX_ENTRIES) this.stdin.splice(0, this.stdin.length - MAX_ENTRIES);
  }

  /** Lines written to channels' stdin since `sinceMs` (wall clock), oldest first. */
  stdinLinesSince(sinceMs = -Infinity): ExecEntry[] {
    return this.stdin.filter((e) => e.at >= sinceMs);
  }

  tcpip(): void {
    this.tcpipOpened++;
  }

  login(): void {
    this.logins++;
  }

  /** SSH connections that logged in since the host started ("one connection per host"). */
  get connections(): number {
    return this.logins;
  }

  /** Exec channels opened since `sinceMs` (wall clock), oldest first. */
  execsSince(sinceMs = -Infinity): ExecEntry[] {
    return this.log.filter((e) => e.at >= sinceMs);
  }

  /** direct-tcpip channels opened since the host started. */
  get tcpipChannels(): number {
    return this.tcpipOpened;
  }
}
