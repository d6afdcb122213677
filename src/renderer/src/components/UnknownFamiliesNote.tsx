// A quiet line per service whose latest scrape serves metric families no supported era lists (a newer SGLang
// or router than this PD Console knows); it opens to the names. Everything the console recognises is charted
// as usual, so this only says what is there and not read.
import type { ScrapeFamilies } from '@shared/contract';
import { ROLES, type Role } from '@shared/domain';
import { NOT_UNDERSTOOD } from '@shared/signals/family-classes';

export function UnknownFamiliesNote({
  families,
}: {
  families?: Partial<Record<Role, ScrapeFamilies>>;
}): React.JSX.Element | null {
  const rows = ROLES.flatMap((role) => {
    const f = families?.[role];
    return f && f.unknown.length > 0 ? [{ role, f }] : [];
  });
  if (rows.length === 0) return null;
  return (
    <div className="unknown-families small muted" data-testid="unknown-families">
      {rows.map(({ role, f }) => (
        <details key={role} data-testid={`unknown-families-${role}`}>
          <summary>
            {role}: {f.unknown.length} {f.unknown.length === 1 ? 'family' : 'families'} {NOT_UNDERSTOOD}
          </summary>
          <p>
            Served by {role}’s /metrics but listed by no SGLang or router version this PD Console knows — most
            likely a newer release. The console reads nothing from them; the {f.used} families it does read
            are charted as usual.
          </p>
          <ul data-testid={`unknown-families-${role}-names`}>
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
