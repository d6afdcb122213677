// The shapes a unit's journal tail and its host's one follow meet by: how a command runs, where a unit's
// entries go, and what a tail needs from the follow.
import type { JournalEntry } from '@shared/contract';
import type { ExecResult } from '../ssh/exec-types';

/** Runs one command on the host, bounded in time and output. */
export type Exec = (command: string, opts: { timeoutMs: number; maxBytes: number }) => Promise<ExecResult>;

/** Where one unit's share of the follow goes. */
export interface FollowSink {
  /** This unit's entries, in journal order, as they arrive. */
  entries(entries: JournalEntry[]): void;
  /** The follow stopped with an error; it starts again by itself (with backoff). */
  failed(error: Error): void;
}

/** What a unit's tail needs from the host's follow (tests give tails their own). */
export interface JournalFeed {
  /**
   * Starts handing `unit`'s entries to `sink`. Resolves once the follow has its position in the journal: every
   * entry logged after the promise resolved reaches the sink, so a backlog read after it misses nothing.
   */
  attach(unit: string, sink: FollowSink): Promise<void>;
  detach(unit: string): void;
  /** What runs on the host for this unit, as the UI shows it. */
  command(unit: string): string;
}
