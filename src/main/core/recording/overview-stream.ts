// The overview stream of a recording (docs/recording-format.md §1.2, §1.3): review's signals evaluated at one
// row per target every stepMs (the caller's OverviewTable), plus every unit, health and event record, written as
// the session goes into small gzip members of its own. A reader that wants the whole span at a glance reads these
// members and nothing else. Its records are ordinary records whose kind carries the prefix "o." (`o.table`,
// `o.unit`, …): readers of the full stream skip them as kinds they do not use, and the overview reader strips the
// prefix and decodes them with the same code as the full stream.
import type { HealthResult, UnitState } from '@shared/domain';
import type { Exposition } from '../probes/exposition/types';
import { BlockSealer } from './block-sum';

export const OVERVIEW_KIND_PREFIX = 'o.';
/**
 * Default time between two overview rows of a target: a day is 2,880 rows per target, about two per pixel of a
 * day-wide chart, and what a first screen computes its signals from (15 s doubles that cost and the overview's size).
 */
export const DEFAULT_OVERVIEW_STEP_MS = 30_000;
/** An overview member is written at least this often (recorded time), and at close. */
export const OVERVIEW_SEGMENT_MS = 10 * 60_000;
/** … or once its text reaches this size. */
export const OVERVIEW_SEGMENT_CHARS = 4 * 1024 * 1024;

const LINE_START = '\n{"k":"';
const OVERVIEW_LINE_START = '\n{"k":"' + OVERVIEW_KIND_PREFIX;

/**
 * What the overview carries: the signals evaluated at overview resolution (core/review/overview-table.ts). It
 * sees every scrape, unit state and health result the writer stores.
 */
export interface OverviewTable {
  scrape(ts: number, target: string, exp: Exposition): void;
  unit(ts: number, source: string, state: UnitState): void;
  health(ts: number, source: string, health: HealthResult): void;
  /** The overview line(s) of the segment ending now, each starting with {"k":"o.; '' when none. */
  take(final: boolean): string;
}

export interface OverviewSegment {
  /** The member's text: the overview lines of the segment and the seal of that block. */
  body: Buffer;
  /** Time of the first and last record in it. */
  t0: number;
  t1: number;
}

export class OverviewStream {
  private readonly sealer = new BlockSealer();
  private text = '';
  private t0 = Infinity;
  private t1 = -Infinity;

  constructor(
    readonly stepMs: number,
    private readonly table: OverviewTable,
  ) {}

  get pendingChars(): number {
    return this.text.length;
  }

  get firstTs(): number {
    return this.t0;
  }

  scrape(ts: number, target: string, exp: Exposition): void {
    this.table.scrape(ts, target, exp);
    this.span(ts);
  }

  unit(ts: number, source: string, state: UnitState): void {
    this.table.unit(ts, source, state);
  }

  health(ts: number, source: string, health: HealthResult): void {
    this.table.health(ts, source, health);
  }

  /** A unit, health, event (or any other small, rare) record line of the full stream, copied as is. */
  record(line: string, ts: number): void {
    if (!line) return;
    // Every line starts with {"k":" (the writers' key order); inside a JSON string those quotes are escaped.
    const text = ('\n' + line).split(LINE_START).join(OVERVIEW_LINE_START).slice(1);
    this.text += text;
    this.sealer.add(text);
    this.span(ts);
  }

  /** The segment written so far, sealed; null when it holds nothing. Starts the next segment. */
  take(final = false): OverviewSegment | null {
    const rows = this.table.take(final);
    if (rows) {
      this.text += rows;
      this.sealer.add(rows);
    }
    if (!this.text) return null;
    const seal = this.sealer.seal(this.t1);
    const seg = { body: Buffer.from(this.text + seal), t0: this.t0, t1: this.t1 };
    this.text = '';
    this.t0 = Infinity;
    this.t1 = -Infinity;
    return seg;
  }

  private span(ts: number): void {
    if (ts < this.t0) this.t0 = ts;
    if (ts > this.t1) this.t1 = ts;
  }
}
