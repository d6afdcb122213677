// A quiet line per service whose latest scrape serves metric families no supported era lists (a newer SGLang
// or router than this PD Console knows); it opens to the names. Everything the console recognises is charted
// as usual, so this only says what is there and not read.
import type { ScrapeFamilies } from '@shared/contract';
import { serviceId, type ServiceConfig } from '@shared/domain';
import { fleetWorkersOf, workerShortName } from '@shared/worker-names';
import { NOT_UNDERSTOOD } from '@shared/signals/family-classes';

export function UnknownFamiliesNote({
  families,
  services,
}: {
  /** By service id. */
  families?: Record<string, ScrapeFamilies>;
  /** The deployment's services, in its order. */
  services: readonly ServiceConfig[];
}): React.JSX.Element | null {
  // Named as the verdict and the alerts name it: by its role where it is its role's only one (a 1P1D box).
  const names = new Map((fleetWorkersOf(services) ?? []).map((w) => [w.id, workerShortName(w)]));
  const rows = services.flatMap((s) => {
    const f = families?.[serviceId(s)];
    const name = names.get(serviceId(s)) ?? serviceId(s);
    return f && f.unknown.length > 0 ? [{ name, f }] : [];
  });
  if (rows.length === 0) return null;
  return (
    <div className="unknown-families small muted" data-testid="unknown-families">
      {rows.map(({ name, f }) => (
        <details key={name} data-testid={`unknown-families-${name}`}>
          <summary>
            {name}: {f.unknown.length} {f.unknown.length === 1 ? 'family' : 'families'} {NOT_UNDERSTOOD}
          </summary>
          <p>
            Served by {name}’s /metrics but listed by no SGLang or router version this PD Console knows — most
            likely a newer release. The console reads nothing from them; the {f.used} families it does read
            are charted as usual.
          </p>
          <ul data-testid={`unknown-families-${name}-names`}>
            {f.unknown.map((n) => (
              <li key={n}>
                <code>{n}</code>
              </li>
            ))}
          </ul>
        </details>
      ))}
    </div>
  );
}
