// The open deployments, live and recorded, behind one lookup: the core contributes the ones it watches, the
// review service the recordings it has open. A request's deployment id becomes a deployment here and nowhere
// else, so no service tells a recording from a live deployment by the shape of its id. Reading (`resolve`)
// answers either; control (`live`) answers only a live one, and the one refusal of a recording is said here.
import type { DeploymentSummary } from '@shared/domain';
import { ApiError } from '../api-error';
import type { Deployment, DeploymentView } from './deployment';

/** One owner of open deployments (the core's live ones, the review service's recordings). */
export interface DeploymentSource<D extends DeploymentView = DeploymentView> {
  find(id: string): D | undefined;
  summaries(): DeploymentSummary[];
  /** Closes one of its own (only asked for ids it found). */
  close(id: string): Promise<void>;
}

/** What services are given to reach a deployment (tests pass a fake). */
export interface DeploymentLookup {
  /** The open deployment of that id, to read; unknown ids are refused with the reason and what to do. */
  resolve(id: string): DeploymentView;
  find(id: string): DeploymentView | undefined;
  /**
   * The live deployment of that id, to act on: `action` (a request name) is what the error says a recording
   * cannot do. Unknown ids are refused as by `resolve`.
   */
  live(id: string, action: string): Deployment;
}

type Owner = { live: true; source: DeploymentSource<Deployment> } | { live: false; source: DeploymentSource };

export class DeploymentRegistry implements DeploymentLookup {
  private readonly owners: Owner[] = [];

  /** A source of live deployments (the core). */
  add(source: DeploymentSource<Deployment>): void {
    this.owners.push({ live: true, source });
  }

  /** A source of deployments that are only read (the recordings open for review). */
  addRecordings(source: DeploymentSource): void {
    this.owners.push({ live: false, source });
  }

  find(id: string): DeploymentView | undefined {
    for (const o of this.owners) {
      const d = o.source.find(id);
      if (d) return d;
    }
    return undefined;
  }

  resolve(id: string): DeploymentView {
    return this.find(id) ?? unknown(id);
  }

  live(id: string, action: string): Deployment {
    for (const o of this.owners) {
      if (o.live) {
        const d = o.source.find(id);
        if (d) return d;
      } else {
        const d = o.source.find(id);
        if (d)
          throw new ApiError(
            'review-read-only',
            `"${d.config.name}" is a recording: ${action} needs a live deployment`,
            'Open the live deployment from the start screen to act on it.',
          );
      }
    }
    return unknown(id);
  }

  /** Every open deployment, in the order the sources were added (live ones first). */
  list(): DeploymentSummary[] {
    return this.owners.flatMap((o) => o.source.summaries());
  }

  /** Closes it in whichever source has it; an id nobody has open is already closed. */
  async close(id: string): Promise<void> {
    const o = this.owners.find((x) => x.source.find(id));
    if (o) await o.source.close(id);
  }
}

function unknown(id: string): never {
  throw new ApiError(
    'unknown-deployment',
    `no open deployment "${id}"`,
    'Open it again from the start screen or the sessions list.',
  );
}
