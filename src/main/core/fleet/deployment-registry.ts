// The open deployments, live and recorded, behind one lookup: the core contributes the ones it watches, the
// review service the recordings it has open. A request's deployment id becomes a `Deployment` here and nowhere
// else, so no service tells a recording from a live deployment by the shape of its id.
import type { DeploymentSummary } from '@shared/domain';
import { ApiError } from '../api-error';
import type { Deployment } from './deployment';

/** One owner of open deployments (the core, the review service). */
export interface DeploymentSource {
  find(id: string): Deployment | undefined;
  summaries(): DeploymentSummary[];
  /** Closes one of its own (only asked for ids it found). */
  close(id: string): Promise<void>;
}

/** What services are given to reach a deployment (tests pass a fake). */
export interface DeploymentLookup {
  /** The open deployment of that id; unknown ids are refused with the reason and what to do. */
  resolve(id: string): Deployment;
  find(id: string): Deployment | undefined;
  /**
   * Refuses `action` (a request name) when the deployment says it cannot run there (a recording). Ids nobody
   * has open pass, so the service answers them as it always did.
   */
  guard(id: string, action: string): void;
}

export class DeploymentRegistry implements DeploymentLookup {
  private readonly sources: DeploymentSource[] = [];

  add(source: DeploymentSource): void {
    this.sources.push(source);
  }

  find(id: string): Deployment | undefined {
    for (const s of this.sources) {
      const d = s.find(id);
      if (d) return d;
    }
    return undefined;
  }

  resolve(id: string): Deployment {
    const d = this.find(id);
    if (!d)
      throw new ApiError(
        'unknown-deployment',
        `no open deployment "${id}"`,
        'Open it again from the start screen or the sessions list.',
      );
    return d;
  }

  guard(id: string, action: string): void {
    const refused = this.find(id)?.refusal(action);
    if (refused) throw refused;
  }

  /** Every open deployment, in the order the sources were added (live ones first). */
  list(): DeploymentSummary[] {
    return this.sources.flatMap((s) => s.summaries());
  }

  /** Closes it in whichever source has it; an id nobody has open is already closed. */
  async close(id: string): Promise<void> {
    const s = this.sources.find((x) => x.find(id));
    if (s) await s.close(id);
  }
}
