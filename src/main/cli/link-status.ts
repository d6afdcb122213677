// The state of a deployment's SSH link as the CLI reports it: followed from the core's 'connection' events, so
// that "since when" survives the reconnect attempts in between (a 'connecting' status only knows when its own
// attempt began), and described in words for people and as an object for --json.
import type { Core } from '../core/core';
import type { ConnectionStatus } from '@shared/domain';

/** What `status --json` prints as `link`; times are ISO 8601. */
export type LinkReport =
  | { state: 'idle' }
  | { state: 'connected'; since: string }
  | { state: 'stale'; since: string; reason: string }
  | {
      state: 'reconnecting';
      /** Unknown only when watching began during a retry. */
      lostSince?: string;
      attempt: number;
      /** Whether that attempt is under way or waits until nextAttemptAt. */
      attemptUnderWay: boolean;
      nextAttemptAt?: string;
      lastError: string | null;
    }
  | { state: 'connecting'; since: string; attempt: number }
  | { state: 'failed'; at: string; reason: string; hint?: string };

export class LinkWatch {
  private status: ConnectionStatus;
  /** Start of the current outage; null while the link is up or was never up. */
  private lostSince: number | null = null;
  private lastError: string | null = null;
  private readonly onConnection = (e: { deploymentId: string; status: ConnectionStatus }): void => {
    if (e.deploymentId === this.deploymentId) this.update(e.status);
  };

  constructor(
    private readonly core: Core,
    private readonly deploymentId: string,
  ) {
    // The live status, not a summary's: the demo's summary is the one made when it was first opened.
    this.status = core.connectionOf(deploymentId).status;
    this.update(this.status);
    core.on('connection', this.onConnection);
  }

  dispose(): void {
    this.core.off('connection', this.onConnection);
  }

  get connected(): boolean {
    return this.status.state === 'connected';
  }

  /** The link carries traffic (connected, or stale: up but slow to answer). */
  get up(): boolean {
    return this.status.state === 'connected' || this.status.state === 'stale';
  }

  get failed(): boolean {
    return this.status.state === 'failed';
  }

  private update(s: ConnectionStatus): void {
    this.status = s;
    if (s.state === 'connected' || s.state === 'stale' || s.state === 'idle') {
      this.lostSince = null;
      this.lastError = null;
    } else if (s.state === 'reconnecting') {
      this.lostSince = s.since;
      this.lastError = s.lastError;
    } else if (s.state === 'failed') this.lastError = s.reason;
  }

  report(): LinkReport {
    const s = this.status;
    switch (s.state) {
      case 'idle':
        return { state: 'idle' };
      case 'connected':
        return { state: 'connected', since: iso(s.since) };
      case 'stale':
        return { state: 'stale', since: iso(s.since), reason: s.reason };
      case 'failed':
        return { state: 'failed', at: iso(s.at), reason: s.reason, ...(s.hint ? { hint: s.hint } : {}) };
      case 'reconnecting':
        return {
          state: 'reconnecting',
          lostSince: iso(s.since),
          attempt: s.attempt,
          attemptUnderWay: false,
          nextAttemptAt: iso(s.nextAttemptAt),
          lastError: s.lastError,
        };
      case 'connecting':
        // A retry after an outage is still "reconnecting" to the operator; only the first connect is not.
        return this.lostSince === null && s.attempt <= 1
          ? { state: 'connecting', since: iso(s.since), attempt: s.attempt }
          : {
              state: 'reconnecting',
              ...(this.lostSince === null ? {} : { lostSince: iso(this.lostSince) }),
              attempt: s.attempt,
              attemptUnderWay: true,
              lastError: this.lastError,
            };
    }
  }

  /** One line: "link lost since 10:02:11 UTC (6 s ago) — reconnecting, attempt 3 in 2 s (last error: …)". */
  text(now: number): string {
    return linkText(this.report(), now);
  }
}

/** A link report in words, as of `now`. */
export function linkText(r: LinkReport, now: number): string {
  switch (r.state) {
    case 'idle':
      return 'not connected';
    case 'connected':
      return `connected since ${clock(r.since)}`;
    case 'stale':
      return `link stale since ${clock(r.since)} (${ago(r.since, now)}): ${r.reason}`;
    case 'connecting':
      return `connecting, attempt ${r.attempt}`;
    case 'failed':
      return `link failed at ${clock(r.at)}: ${r.reason}${r.hint ? ` — ${r.hint}` : ''} (not retrying)`;
    case 'reconnecting': {
      const when = r.attemptUnderWay
        ? 'under way'
        : `in ${Math.max(0, Math.ceil((Date.parse(r.nextAttemptAt!) - now) / 1000))} s`;
      return (
        `link lost${r.lostSince ? ` since ${clock(r.lostSince)} (${ago(r.lostSince, now)})` : ''} — reconnecting, attempt ${r.attempt} ${when}` +
        (r.lastError ? ` (last error: ${r.lastError})` : '')
      );
    }
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** "10:02:11 UTC": the kv lines are stamped in UTC too. */
function clock(isoTime: string): string {
  return `${isoTime.slice(11, 19)} UTC`;
}

function ago(isoTime: string, now: number): string {
  return `${Math.max(0, Math.round((now - Date.parse(isoTime)) / 1000))} s ago`;
}
