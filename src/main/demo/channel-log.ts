// What the demo host's SSH server was asked to open, for tests and benchmarks that count the app's load on a
// host ("one journalctl per unit", "channels per minute"): every exec command line with the wall time it
// arrived, and the number of direct-tcpip channels (HTTP). Bounded: the oldest entries go first.
export interface ExecEntry {
  /** Wall-clock epoch ms the channel was opened. */
  at: number;
  command: string;
}

const MAX_ENTRIES = 50_000;

export class DemoChannelLog {
  private readonly log: ExecEntry[] = [];
  private tcpipOpened = 0;
  private logins = 0;

  exec(command: string): void {
    this.log.push({ at: Date.now(), command });
    if (this.log.length > MAX_ENTRIES) this.log.splice(0, this.log.length - MAX_ENTRIES);
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
