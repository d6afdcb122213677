// What the signal evaluator returns for one target, and how it is asked.
import type { Role } from '@shared/domain';
import type { KvMeta } from './kv';

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
}

export interface TargetSignals {
  role: Role;
  /** Signal key without the role prefix → value at every row of the target (NaN = no value). */
  values: Map<string, Float64Array>;
  /** Per row: index into kvMetas of the KV source used, −1 where no KV figure. */
  kvSource: Int8Array;
  kvMetas: KvMeta[];
}
