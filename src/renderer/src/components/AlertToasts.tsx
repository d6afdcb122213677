// In-app toasts for alerts as they fire and resolve (also where desktop notifications are off).
import { useEffect, useState } from 'react';
import type { AppEvent } from '@shared/domain';
import { onAlert } from '../state/notifications';
import { navigate } from '../state/ui';

const SHOW_MS = 8000;
const MAX = 4;

export function AlertToasts(): React.JSX.Element {
  const [toasts, setToasts] = useState<AppEvent[]>([]);
  useEffect(
    () =>
      onAlert((e) => {
        setToasts((t) => [...t, e].slice(-MAX));
        setTimeout(() => setToasts((t) => t.filter((x) => x.id !== e.id)), SHOW_MS);
      }),
    [],
  );
  return (
    <div className="toasts" aria-live="assertive">
      {toasts.map((t) => (
        <button
          key={t.id}
          className={`toast sev-${t.severity}`}
          data-testid="alert-toast"
          onClick={() => navigate({ name: 'alerts' })}
        >
          <strong>{t.title}</strong>
          {t.detail && <span>{t.detail}</span>}
        </button>
      ))}
    </div>
  );
}
