// "open the journal at the crash": the journal-around drawer at the moment a failing unit printed its last error
// (or exited), for its role or, in a fleet, its worker's units.
import type { Role } from '@shared/domain';
import { showAround } from '../state/ui';

export function CrashLink({
  ts,
  role,
  worker,
}: {
  ts: number;
  role: Role;
  worker?: string;
}): React.JSX.Element {
  return (
    <button
      className="link"
      data-testid="open-journal-at-crash"
      data-ts={ts}
      onClick={() => showAround(ts, role, worker)}
      title="The journal lines ±20 s around the last error"
    >
      open the journal at the crash →
    </button>
  );
}
