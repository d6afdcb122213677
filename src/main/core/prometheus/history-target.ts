// Which Prometheus holds a deployment's history and which label matchers select each worker's series there:
// what history needs from discovery (which job/instance labels scrape which worker). Discovery's service
// provides it in the app; tests set one directly (HistoryService.setPrometheus).
import type { Role } from '@shared/domain';
import type { PromApi } from './prom-api';

export interface PromHistoryTarget {
  api: PromApi;
  /** The scrape interval of the deployment's targets (s), when known: the lower bound of a range's step. */
  scrapeIntervalS?: number;
  /**
   * Label matchers (without braces) selecting one worker's series (`scope` a worker id, `decode-1`) or, with no
   * scope, every worker of the role; null when Prometheus does not scrape it (the chart says so).
   */
  selector(role: Role, scope?: string): string | null;
  /** Selector of the DCGM exporter of a GPU host (`scope` a host id; none: the deployment's only host). */
  gpuSelector?(scope?: string): string | null;
}

/** Finds the Prometheus of a deployment; null when none is known (history is then live + recordings). */
export type PromHistoryProvider = (deploymentId: string) => Promise<PromHistoryTarget | null>;
