// The units this console is restarting right now, as the restart and roll services report them: what the alerts
// mark "expected — restart in progress" instead of notifying.
import type { Role } from '@shared/domain';

export interface RestartingUnit {
  role: Role;
  /**
   * Being restarted now (a restart's every unit; a roll's current worker). False for the other workers of a
   * running roll (done or waiting): the alerts of the role as a whole (its queues, its transfers) are the roll's
   * until it ends, a worker's own alerts only while it is the one restarted.
   */
  current: boolean;
  /** A fleet worker (its service id); absent for a one-host pair's role. */
  worker?: string;
  /** In words: "restart of decode by alice (operation r-…)", "rolling restart of every decode worker by alice: decode-1, 2 of 3 (roll …)". */
  what: string;
}
