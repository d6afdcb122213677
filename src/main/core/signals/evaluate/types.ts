// What the signal evaluator returns for one target, and how it is asked.
import type { Role } from '@shared/domain';
import type { KvMeta } from './kv';
import type { WorkerRows } from './router-workers';

export interface EvaluateOptions {
  /** Window of rates and quantiles (ms); default 60 s. */
  rateWindowMs?: number;
  /** Rows before this one are not evaluated (NaN): the live push asks for the newest row only. */
  from?: number;
  /**
   * KV capacity from /server_info, where the scrape has no max_total_num_tokens gauge: one number (live), or
   * one per row (a recording's capacity as the monitor read it at each scrape; NaN where unknown).
   */
  capacityFromServerInfo?: number | ArrayLike<number>;
  /** Also evaluate each dp rank's used and capacity tokens (`kv_rank.<r>.used`, `.capacity`). */
  rankTokens?: boolean;
  /**
   * false: leave KV usage out (the live store takes it from the monitor's observation of the same poll, which
   * alone knows /server_info's capacity, so a scrape's KV is evaluated once).
   */
  kv?: boolean;
}

export interface TargetSignals {
  role: Role;
  /** Signal key without the role prefix → value at every row of the target (NaN = no value). */
  values: Map<string, Float64Array>;
  /** Per row: index into kvMetas of the KV source used, −1 where no KV figure. */
  kvSource: Int8Array;
  kvMetas: KvMeta[];
  /** A router's workers per row, from row `workersFrom` on (their row 0 is the target's row workersFrom). */
  workers?: WorkerRows;
  workersFrom?: number;
}
